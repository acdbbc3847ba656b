package db

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshhq/hq/internal/wait"
	"github.com/meshhq/hq/internal/workers"
)

// Of two controllers on one database, one at a time runs a leased worker; when the holder
// stops, the other takes the work over within a lease's length.
func TestALeasedWorkerRunsInOneControllerAtATime(t *testing.T) {
	opt := Options{Now: time.Now, LeaseFor: 300 * time.Millisecond}
	a, _ := setupWith(t, opt)
	b := open(t, a.path, opt)
	var running [2]atomic.Int32
	var ran [2]atomic.Bool
	work := func(i int) workers.Worker {
		return workers.Loop("test-work", func(ctx context.Context) {
			running[i].Add(1)
			ran[i].Store(true)
			defer running[i].Add(-1)
			<-ctx.Done()
		})
	}
	ga := workers.Start(context.Background(), nil, a.Leased(work(0), "a"))
	gb := workers.Start(context.Background(), nil, b.Leased(work(1), "b"))
	defer gb.Stop()
	wait.For(t, 5*time.Second, "one controller running the work", func() bool { return running[0].Load()+running[1].Load() == 1 })
	holder := 0
	if running[1].Load() == 1 {
		holder = 1
	}
	// Several renewals later, still the same one, and never both.
	for range 20 {
		if running[0].Load()+running[1].Load() != 1 || running[holder].Load() != 1 {
			t.Fatalf("running: a %d, b %d; want only %d", running[0].Load(), running[1].Load(), holder)
		}
		time.Sleep(30 * time.Millisecond) // the time under test: renewals pass
	}
	if ran[1-holder].Load() {
		t.Fatal("the controller without the lease ran the work")
	}
	leases, err := a.Leases(context.Background())
	if err != nil || len(leases) != 1 || leases[0].Holder != []string{"a", "b"}[holder] {
		t.Fatalf("leases %+v, %v", leases, err)
	}
	if holder == 0 {
		ga.Stop()
	} else {
		gb.Stop()
	}
	other := 1 - holder
	wait.For(t, 5*time.Second, "the other controller taking the work over", func() bool { return running[other].Load() == 1 })
	if running[holder].Load() != 0 {
		t.Fatal("the stopped controller still runs the work")
	}
	ga.Stop()
}

// A lease another holds is not taken before it expires, and is taken after.
func TestALeaseIsTakenOnlyOnceExpired(t *testing.T) {
	s, _ := setupWith(t, Options{LeaseFor: time.Minute})
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		holder string
		at     time.Duration
		want   bool
	}{
		{"a", 0, true}, {"b", 30 * time.Second, false}, {"a", 40 * time.Second, true},
		{"b", 99 * time.Second, false}, {"b", 100 * time.Second, true}, {"a", 101 * time.Second, false},
	} {
		held, err := s.takeLease(ctx, "w", step.holder, t0.Add(step.at))
		if err != nil || held != step.want {
			t.Fatalf("%s at +%s: held %v (%v), want %v", step.holder, step.at, held, err, step.want)
		}
	}
}
