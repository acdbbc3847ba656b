package db

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// clock is a settable time for tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// setup opens a store on a fresh database built by the real migrations.
func setup(t testing.TB) (*Store, *clock) {
	t.Helper()
	s, err := Open(context.Background(), testdb.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := &clock{t: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	s.Now = c.now
	s.StuckAttempts = 3
	return s, c
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
