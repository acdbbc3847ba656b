package db

import (
	"context"
	"github.com/meshhq/hq/internal/testclock"
	"slices"
	"testing"
	"time"

	"github.com/meshhq/hq"
	_ "github.com/meshhq/hq/db/postgres" // the engines the tests open
	_ "github.com/meshhq/hq/db/sqlite"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/wait"
	"github.com/meshhq/hq/internal/workers"
)

// clock is a settable time for tests.
type clock = testclock.Clock

// setup opens a store on a fresh database built by the real migrations, on a clock of the
// test's, and runs every worker of the store until the test ends.
func setup(t testing.TB) (*Store, *clock) {
	t.Helper()
	s, c := setupWith(t, Options{})
	start(t, s.Workers()...)
	return s, c
}

// setupWith opens a store with opt (on the test's clock and with 3 attempts to stuck unless opt
// says otherwise) and runs none of its workers.
func setupWith(t testing.TB, opt Options) (*Store, *clock) {
	t.Helper()
	c := testclock.At(time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC))
	if opt.Now == nil {
		opt.Now = c.Now
	}
	if opt.StuckAttempts == 0 {
		opt.StuckAttempts = 3
	}
	return open(t, testdb.New(t), opt), c
}

// open opens hqDB, closed when the test ends.
func open(t testing.TB, hqDB string, opt Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), hqDB, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// setupSteppingRollouts is setup without the rollout worker, for a test that steps rollouts
// itself.
func setupSteppingRollouts(t testing.TB) (*Store, *clock) {
	t.Helper()
	s, c := setupWith(t, Options{})
	start(t, without(s.Workers(), "rollouts")...)
	return s, c
}

// start runs ws until the test ends, stopped before the store they work on is closed (the
// store was opened before, so its Close is cleaned up after).
func start(t testing.TB, ws ...workers.Worker) {
	t.Helper()
	g := workers.Start(context.Background(), nil, ws...)
	t.Cleanup(g.Stop)
}

// waitListening returns once something waits for node's generation to move.
func waitListening(t testing.TB, s *Store, node string) {
	t.Helper()
	wait.For(t, 5*time.Second, "a waiter on "+node, func() bool {
		s.bells.mu.Lock()
		defer s.bells.mu.Unlock()
		return len(s.bells.on[node]) > 0
	})
}

// without is ws less the workers named.
func without(ws []workers.Worker, names ...string) []workers.Worker {
	var out []workers.Worker
	for _, w := range ws {
		if !slices.Contains(names, w.Name()) {
			out = append(out, w)
		}
	}
	return out
}

func mustNode(t testing.TB, s *Store, name string) {
	t.Helper()
	if _, _, err := s.CreateNode(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

func mustModule(t testing.TB, s *Store, name string, rs ...hq.Resource) PutModuleResult {
	t.Helper()
	res, err := s.PutModule(context.Background(), name, rs)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustAssign(t testing.TB, s *Store, node, module string) int64 {
	t.Helper()
	g, err := s.Assign(context.Background(), node, module, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustCompose(t testing.TB, s *Store, node, instance string) hq.Declaration {
	t.Helper()
	d, err := s.Compose(context.Background(), node, instance)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustGetNode(t testing.TB, s *Store, name string) hq.NodeView {
	t.Helper()
	v, err := s.GetNode(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustGeneration(t testing.TB, s *Store, node string) int64 {
	t.Helper()
	g, err := s.NodeGeneration(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustGetModule(t testing.TB, s *Store, name string) hq.ModuleView {
	t.Helper()
	m, err := s.GetModule(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustMeshStatus(t testing.TB, s *Store) hq.MeshStatus {
	t.Helper()
	st, err := s.MeshStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// mustRollouts is the newest limit rollouts, of which there must be at least one.
func mustRollouts(t testing.TB, s *Store, limit int) []hq.Rollout {
	t.Helper()
	rs, err := s.ListRollouts(context.Background(), limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 {
		t.Fatal("no rollout")
	}
	return rs
}

func mustGetRollout(t testing.TB, s *Store, id int64) hq.Rollout {
	t.Helper()
	r, err := s.GetRollout(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func file(name, content string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindFile, Path: "/etc/" + name, Content: content}
}

func wantCode(t *testing.T, err error, code hq.Code) {
	t.Helper()
	if got := hq.ErrorCode(err); err == nil || got != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

// Paging by name lists every node once, whatever its name is made of: the order the database
// sorts in and the order a page ends at are the same (bytes, on both engines).
func TestListNodesPagesEveryNode(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	names := []string{"B", "a", "a-c", "a_z", "ab", "web-10", "web.2", "web1"}
	for _, n := range names {
		mustNode(t, s, n)
	}
	seen := map[string]bool{}
	after := ""
	for range 20 {
		p, err := s.ListNodes(ctx, NodeFilter{After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range p.Nodes {
			if seen[n.Name] {
				t.Errorf("%s listed twice", n.Name)
			}
			seen[n.Name] = true
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	for _, n := range names {
		if !seen[n] {
			t.Errorf("%s never listed", n)
		}
	}
}
