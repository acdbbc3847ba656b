package db

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/workers"
)

func TestGenerationFollowsEveryDeclarationChange(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustNode(t, s, "web-2")
	mustModule(t, s, "app", file("a", "1"))
	if g := mustAssign(t, s, "web-1", "app"); g != 1 {
		t.Fatalf("assign: generation %d, want 1", g)
	}
	if g := mustAssign(t, s, "web-1", "app"); g != 1 {
		t.Fatalf("assigning again changes nothing: generation %d, want 1", g)
	}
	res := mustModule(t, s, "app", file("a", "2"))
	if res.Revision != 2 || res.Generations["web-1"] != 2 || len(res.Generations) != 1 {
		t.Fatalf("new revision: %+v, want revision 2 and only web-1 at generation 2", res)
	}
	if again := mustModule(t, s, "app", file("a", "2")); again.Created || again.Revision != 2 {
		t.Fatalf("identical upload: %+v, want revision 2 unchanged", again)
	}
	if g, err := s.Take(ctx, "web-1", "app", nil); err != nil || g != 3 {
		t.Fatalf("take: %d, %v; want 3", g, err)
	}
	if g, err := s.Unassign(ctx, "web-1", "app", nil); err != nil || g != 4 {
		t.Fatalf("unassign: %d, %v; want 4", g, err)
	}
	if g := mustGeneration(t, s, "web-2"); g != 0 {
		t.Fatalf("web-2 was never changed: generation %d, want 0", g)
	}
}

func TestIfMatchConflictChangesNothing(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	stale := int64(0)
	yes := true
	_, err := s.Assign(ctx, "web-1", "app", &yes, &stale)
	wantCode(t, err, hq.CodeConflict)
	if e := err.(*hq.Error); e.Generation == nil || *e.Generation != 1 {
		t.Fatalf("conflict names generation %v, want 1", e.Generation)
	}
	v := mustGetNode(t, s, "web-1")
	if v.Assignments[0].Taken || v.Generation != 1 {
		t.Fatalf("after a refused write: %+v, want untaken at generation 1", v.Assignments)
	}
	_, err = s.Unassign(ctx, "web-1", "app", &stale)
	wantCode(t, err, hq.CodeConflict)
	_, err = s.DeleteNode(ctx, "web-1", &stale)
	wantCode(t, err, hq.CodeConflict)
}

// Two writers with the same If-Match: exactly one wins, the other sees the conflict.
func TestIfMatchRace(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	for round := range 20 {
		mods := []string{fmt.Sprintf("a%d", round), fmt.Sprintf("b%d", round)}
		for _, m := range mods {
			mustModule(t, s, m, file(m, "1"))
		}
		gen := mustGeneration(t, s, "web-1")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, m := range mods {
			wg.Go(func() { _, errs[i] = s.Assign(ctx, "web-1", m, nil, &gen) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else if hq.ErrorCode(err) != hq.CodeConflict {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d writers won, want exactly 1 (%v)", round, won, errs)
		}
		if now := mustGeneration(t, s, "web-1"); now != gen+1 {
			t.Fatalf("round %d: generation %d, want %d", round, now, gen+1)
		}
	}
}

func TestRevisionResetsChangedResourcesOnly(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"), file("b", "1"), file("c", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, applied("app", "a", "b", "c")...)
	mustModule(t, s, "app", file("a", "1"), file("b", "2"), file("d", "1"))
	v := mustGetNode(t, s, "web-1")
	got := map[string]hq.State{}
	for _, r := range v.Resources {
		got[r.Resource] = r.State
	}
	want := map[string]hq.State{"a": hq.StateApplied, "b": hq.StatePending, "d": hq.StatePending}
	if len(got) != len(want) {
		t.Fatalf("resources %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("resources %v, want %v", got, want)
		}
	}
	tr, err := s.Transitions(ctx, "web-1", 10)
	if err != nil || len(tr) < 3 {
		t.Fatalf("transitions %+v, %v; want at least 3", tr, err)
	}
	if tr[0].To != "removed" && tr[1].To != "removed" && tr[2].To != "removed" {
		t.Fatalf("no removed transition for c in %+v", tr[:3])
	}
}

func TestTwoModulesMayNotDeclareOnePathOnANode(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "a", file("conf", "from a"))
	mustModule(t, s, "b", hq.Resource{Name: "other", Kind: hq.KindFile, Path: "/etc/other", Content: "b"})
	mustAssign(t, s, "web-1", "a")
	mustAssign(t, s, "web-1", "b")
	mustModule(t, s, "c", file("conf", "from c"))
	_, err := s.Assign(ctx, "web-1", "c", nil, nil)
	wantCode(t, err, hq.CodeConflict)
	// A new revision of b that takes a's path is refused whole, and changes nothing.
	_, err = s.PutModule(ctx, "b", []hq.Resource{file("conf", "b too")})
	wantCode(t, err, hq.CodeConflict)
	if m := mustGetModule(t, s, "b"); m.Revision != 1 {
		t.Fatalf("module b at revision %d after a refused upload", m.Revision)
	}
	if g := mustGeneration(t, s, "web-1"); g != 2 {
		t.Fatalf("generation %d after refused changes, want 2", g)
	}
}

// woken is what a long-poll returned.
type woken struct {
	gen int64
	err error
}

// A long-poll wakes on a change made by another process on the same database.
func TestWaitGenerationSeesAnotherProcess(t *testing.T) {
	s, _ := setupWith(t, Options{WatchEvery: 20 * time.Millisecond})
	start(t, s.Workers()...)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	other := open(t, s.path, Options{})
	got := make(chan woken, 1)
	go func() { g, err := s.WaitGeneration(ctx, "web-1", 0, 10*time.Second); got <- woken{g, err} }()
	waitListening(t, s, "web-1")
	start := time.Now()
	if _, err := other.Assign(ctx, "web-1", "app", nil, nil); err != nil {
		t.Fatal(err)
	}
	if w := <-got; w.err != nil || w.gen != 1 || time.Since(start) > 2*time.Second {
		t.Fatalf("woke with generation %d, %v after %s", w.gen, w.err, time.Since(start))
	}
}

// A change another process makes before the watcher's first tick still wakes the long-poll:
// the watcher takes its first look before the waiter reads its generation.
func TestWaitGenerationSeesAChangeBeforeTheFirstTick(t *testing.T) {
	s, _ := setupWith(t, Options{WatchEvery: 300 * time.Millisecond})
	start(t, s.Workers()...)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	other := open(t, s.path, Options{})
	got := make(chan woken, 1)
	go func() { g, err := s.WaitGeneration(ctx, "web-1", 0, 10*time.Second); got <- woken{g, err} }()
	waitListening(t, s, "web-1")
	if _, err := other.Assign(ctx, "web-1", "app", nil, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-got:
		if w.err != nil || w.gen != 1 {
			t.Fatalf("woke with generation %d, %v; want 1", w.gen, w.err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the long-poll slept through a change made by another process")
	}
}

// The workers stop when told and are waited for, the store closes after them, and Close may
// be called twice.
func TestWorkersStopAndCloseTwice(t *testing.T) {
	t.Parallel()
	s, _ := setupWith(t, Options{WatchEvery: time.Millisecond, MoveEvery: time.Millisecond, RolloutEvery: time.Millisecond, CheckpointEvery: time.Millisecond})
	g := workers.Start(context.Background(), nil, s.Workers()...)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	mustNode(t, s, "web-1")
	s.WaitGeneration(ctx, "web-1", 0, time.Second)
	g.Stop()
	if s.committer.Load() != nil {
		t.Fatal("the committer is still taking reports after it stopped")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// The read that checks a node's token gives its generation too, and a long-poll may wait on it
// without reading it again for as long as no bell has rung since: a change in this process or,
// seen by the watcher, in another one, makes it read again.
func TestAGenerationReadWithTheTokenServesUntilABellRings(t *testing.T) {
	// The workers start once the first read has been asked: until then nothing can ring.
	s, _ := setupWith(t, Options{WatchEvery: 20 * time.Millisecond})
	ctx := context.Background()
	token, gen, err := s.CreateNode(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	mustNode(t, s, "web-2")
	mustModule(t, s, "app", file("a", "1"))
	check := func() NodeCheck {
		t.Helper()
		c, err := s.CheckNodeToken(ctx, "web-1", token)
		if err != nil || !c.Valid || c.Generation != mustGeneration(t, s, "web-1") {
			t.Fatalf("checked: %+v, %v; want valid at generation %d", c, err, mustGeneration(t, s, "web-1"))
		}
		return c
	}
	c := check()
	if g, ok := s.GenerationSince(c); !ok || g != gen {
		t.Fatalf("nothing rang: %d, %v; want %d, true", g, ok, gen)
	}
	if c, err := s.CheckNodeToken(ctx, "web-1", token+"x"); err != nil || c.Valid || c.Generation != 0 {
		t.Fatalf("another token: %+v, %v; want refused, with no generation", c, err)
	}
	if _, ok := s.GenerationSince(NodeCheck{}); ok {
		t.Fatal("a check that found no valid token served as a read")
	}

	start(t, s.Workers()...)
	mustAssign(t, s, "web-1", "app")
	if _, ok := s.GenerationSince(c); ok {
		t.Fatal("a generation read before an assignment served after it")
	}

	// Once the watcher has seen the assignment, a new read serves while nothing changes.
	time.Sleep(300 * time.Millisecond)
	c = check()
	time.Sleep(300 * time.Millisecond)
	if _, ok := s.GenerationSince(c); !ok {
		t.Fatal("a read stopped serving with nothing changed")
	}
	other := open(t, s.path, Options{})
	if _, err := other.Assign(ctx, "web-2", "app", nil, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := s.GenerationSince(c); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("another process's change, once the watcher saw it, left an earlier read serving")
		}
	}
}
