package db

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/wait"
)

// waitingTogether sends one report per node at once while the one write connection is held,
// so that they all wait for the writer together, and returns each one's error. It lets the
// writer go once the committer waits for the connection and every report has come to the
// committer's door.
func waitingTogether(t *testing.T, s *Store, decls []hq.Declaration, results func(i int) []hq.Result) []error {
	t.Helper()
	ctx := context.Background()
	hold, err := s.write.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waits := s.write.Stats().WaitCount
	var arrived atomic.Int64
	errs := make([]error, len(decls))
	var wg sync.WaitGroup
	for i, d := range decls {
		wg.Go(func() {
			ctx := &arrival{Context: ctx, arrived: func() { arrived.Add(1) }}
			_, errs[i] = s.Ingest(ctx, d.Node, hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: results(i)}, IngestOptions{})
		})
	}
	wait.For(t, 10*time.Second, "every report at the committer, and the committer waiting for the writer", func() bool {
		return arrived.Load() == int64(len(decls)) && s.write.Stats().WaitCount > waits
	})
	hold.Close()
	wg.Wait()
	return errs
}

// arrival is a report's context that notices the report arrive at the committer: Ingest asks
// for its Done channel first in inBatchTx, to offer the report to the committer or give up.
type arrival struct {
	context.Context
	once    sync.Once
	arrived func()
}

func (c *arrival) Done() <-chan struct{} {
	c.once.Do(c.arrived)
	return c.Context.Done()
}

// Reports that wait for the writer together are committed together, and each still gets its
// own answer: the good ones are written, and one refused for what it says changes nothing.
// One the database itself refuses (a trigger here) fails alone, and the others of its batch
// are written again without it.
func TestReportsWaitingTogetherShareACommit(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	const nodes = 12
	mustModule(t, s, "app", file("conf", "1"), file("motd", "1"))
	decls := make([]hq.Declaration, nodes)
	for i := range nodes {
		name := fmt.Sprintf("n%02d", i)
		mustNode(t, s, name)
		mustAssign(t, s, name, "app")
		decls[i] = mustCompose(t, s, name, "test")
	}
	states := func(name string) []hq.State {
		out := make([]hq.State, nodes)
		for i := range nodes {
			out[i] = resource(t, s, fmt.Sprintf("n%02d", i), "app", name).State
		}
		return out
	}

	errs := waitingTogether(t, s, decls[:11], func(i int) []hq.Result {
		if i == 10 {
			return applied("app", "conf", "undeclared")
		}
		return applied("app", "conf")
	})
	for i, err := range errs {
		if i == 10 {
			wantCode(t, err, hq.CodeInvalid)
		} else if err != nil {
			t.Errorf("n%02d: %v", i, err)
		}
	}
	for i, st := range states("conf") {
		if want := i < 10; (st == hq.StateApplied) != want {
			t.Errorf("n%02d: conf is %s", i, st)
		}
	}
	if got := s.batched.Load(); got < 2 {
		t.Fatalf("the largest commit held %d report(s); the waiting reports were not committed together", got)
	}

	if _, err := s.write.Exec(testdb.Pick(
		`CREATE TRIGGER refuse_n11 BEFORE INSERT ON reports WHEN NEW.node = 'n11' BEGIN SELECT RAISE(ABORT, 'the disk went away'); END`,
		`CREATE FUNCTION refuse_n11() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'the disk went away'; END $$;
		CREATE TRIGGER refuse_n11 BEFORE INSERT ON reports FOR EACH ROW WHEN (NEW.node = 'n11') EXECUTE FUNCTION refuse_n11()`)); err != nil {
		t.Fatal(err)
	}
	errs = waitingTogether(t, s, decls, func(int) []hq.Result { return applied("app", "conf", "motd") })
	for i, err := range errs {
		if (err != nil) != (i == 11) {
			t.Errorf("n%02d: %v", i, err)
		}
	}
	for i, st := range states("motd") {
		if want := i < 11; (st == hq.StateApplied) != want {
			t.Errorf("n%02d: motd is %s", i, st)
		}
	}
}

// With CommitWait, a committer whose requests have been arriving close together waits for
// company before it commits, and one in a quiet hour commits at once.
func TestCommitWaitsForCompanyOnlyWhenBusy(t *testing.T) {
	t.Parallel()
	const commitWait = 900 * time.Millisecond
	s, _ := setupWith(t, Options{CommitWait: commitWait})
	start(t, s.Committer())
	ctx := context.Background()
	nothing := func(context.Context, driver.Queries) error { return nil }
	send := func() <-chan error {
		done := make(chan error, 1)
		go func() { done <- s.inBatchTx(ctx, nothing) }()
		return done
	}

	// Quiet: the first request is committed at once, well before the wait would end.
	select {
	case err := <-send():
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(commitWait * 2 / 3):
		t.Fatal("a lone request in a quiet hour waited for company")
	}

	// Busy: a burst brings the gap down, and then a request waits for the next one.
	var wg sync.WaitGroup
	for range 60 {
		wg.Go(func() {
			if err := s.inBatchTx(ctx, nothing); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// The burst's own commits are forgotten: the one commit that follows is of the next two
	// requests alone, sent a commit's time apart. Only a committer that waited for company after
	// the first puts both in it; one that committed the first at once makes two commits of one.
	s.batched.Store(0)
	first := send()
	time.Sleep(50 * time.Millisecond) // spaces the arrivals; a lone commit takes a few ms
	second := send()
	for _, done := range []<-chan error{first, second} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if got := s.batched.Load(); got != 2 {
		t.Fatalf("after a burst, the next two requests were committed %d at most together, want 2: the first did not wait for company", got)
	}
}
