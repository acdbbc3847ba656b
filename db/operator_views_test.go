package db

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// The views operators read in sqlite3 answer from the same rows the API does.
func TestOperatorViews(t *testing.T) {
	t.Parallel()
	s, _ := setupWith(t, Options{StuckAttempts: 1})
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"), file("b", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, failing("app", "a"), applied("app", "b")[0])
	ingest(t, s, "web-1", d, failing("app", "a"), applied("app", "b")[0])

	var resources, applied, stuck int
	err := s.read.QueryRowContext(ctx, `SELECT resources, applied, stuck FROM node_overview WHERE node = 'web-1'`).Scan(&resources, &applied, &stuck)
	if err != nil || resources != 2 || applied != 1 || stuck != 1 {
		t.Fatalf("node_overview: %d resources, %d applied, %d stuck (%v)", resources, applied, stuck, err)
	}
	var res string
	var attempts, never int
	err = s.read.QueryRowContext(ctx, `SELECT resource, attempts, never_applied FROM stuck_resources`).Scan(&res, &attempts, &never)
	if err != nil || res != "a" || attempts != 2 || never != 1 {
		t.Fatalf("stuck_resources: %s %d %d (%v)", res, attempts, never, err)
	}
	var held int
	if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM held_resources`).Scan(&held); err != nil || held != 0 {
		t.Fatalf("held_resources: %d (%v)", held, err)
	}
}

// The sudoers question of docs/database.md, run as written there, and drift_by_resource.
func TestDriftQuestionsInSQL(t *testing.T) {
	t.Parallel()
	s, clock := setup(t)
	ctx := context.Background()
	clock.Set(time.Now().UTC()) // the view and the query measure from SQLite's clock
	mustNode(t, s, "web-1")
	mustModule(t, s, "base", hq.Resource{Name: "sudoers", Kind: hq.KindFile, Path: "/etc/sudoers", Content: "root ALL=(ALL) ALL\n"},
		file("motd", "hi"))
	mustAssign(t, s, "web-1", "base")
	d := mustCompose(t, s, "web-1", "test")
	rs := applied("base", "sudoers", "motd")
	ingest(t, s, "web-1", d, rs...)
	for _, ref := range []int{0, 1, 0} {
		clock.Advance(time.Second)
		rs := applied("base", "sudoers", "motd")
		rs[ref].Changed, rs[ref].Drift, rs[ref].DriftDetail = true, true, "content changed"
		ingest(t, s, "web-1", d, rs...)
	}
	doc, err := os.ReadFile("../docs/database.md")
	if err != nil {
		t.Fatal(err)
	}
	_, q, ok := strings.Cut(string(doc), testdb.Pick("-- who", "-- on PostgreSQL: who")+" changed /etc/sudoers by hand, on which machines, this week\n")
	q, _, _ = strings.Cut(q, ";")
	if !ok || q == "" {
		t.Fatal("docs/database.md has no sudoers question")
	}
	rows, err := s.read.QueryContext(ctx, q)
	if err != nil {
		t.Fatalf("the documented query fails: %v\n%s", err, q)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if n != 2 {
		t.Fatalf("the sudoers question found %d put-backs, want 2", n)
	}
	var drifts int
	if err := s.read.QueryRowContext(ctx, `SELECT drifts FROM drift_by_resource WHERE node = 'web-1' AND resource = 'sudoers'`).Scan(&drifts); err != nil || drifts != 2 {
		t.Fatalf("drift_by_resource: %d (%v)", drifts, err)
	}
}
