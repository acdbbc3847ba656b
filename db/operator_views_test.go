package db

import (
	"context"
	"testing"
)

// The views operators read in sqlite3 answer from the same rows the API does.
func TestOperatorViews(t *testing.T) {
	s, _ := setup(t)
	ctx := context.Background()
	s.StuckAttempts = 1
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"), file("b", "1"))
	mustAssign(t, s, "web-1", "app")
	d, _ := s.Compose(ctx, "web-1", "test")
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
