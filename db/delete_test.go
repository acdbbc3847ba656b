package db

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// Deleting a node keeps its history; registering the name again starts a new registration
// whose generations are above every one the old had, and SQL tells the two apart.
func TestDeleteNodeKeepsItsHistory(t *testing.T) {
	t.Parallel()
	s, clock := setup(t)
	ctx := context.Background()
	// The triggers date some transitions by SQLite's clock: keep the test's clock beside it.
	clock.Set(time.Now().UTC().Truncate(time.Millisecond))
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, applied("app", "a")...)
	clock.Advance(time.Minute)
	if _, err := s.DeleteNode(ctx, "web-1", nil); err != nil {
		t.Fatal(err)
	}
	trs, err := s.Transitions(ctx, "web-1", 100)
	if err != nil || len(trs) != 3 || trs[0].To != "removed" {
		t.Fatalf("transitions after delete: %+v, %v", trs, err)
	}
	if reps, err := s.Reports(ctx, "web-1", 10); err != nil || len(reps) != 1 {
		t.Fatalf("reports after delete: %+v, %v", reps, err)
	}
	_, err = s.GetNode(ctx, "web-1")
	wantCode(t, err, hq.CodeNotFound)
	if !strings.Contains(err.Error(), "was deleted at") {
		t.Fatalf("a deleted node's error says %q", err)
	}
	if at, err := s.DeletedAt(ctx, "web-1"); err != nil || !at.Equal(clock.Now()) {
		t.Fatalf("deleted at %s, %v", at, err)
	}
	if page, err := s.ListNodes(ctx, NodeFilter{}); err != nil || len(page.Nodes) != 0 {
		t.Fatalf("nodes after delete: %+v, %v; want none", page.Nodes, err)
	}
	_, err = s.Ingest(ctx, "web-1", hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest}, IngestOptions{})
	wantCode(t, err, hq.CodeNotFound)

	clock.Advance(time.Minute)
	token, gen, err := s.CreateNode(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.CheckNodeToken(ctx, "web-1", token); err != nil || !c.Valid || c.Generation != gen {
		t.Fatalf("the new registration's token: %+v, %v; want valid at generation %d", c, err, gen)
	}
	if g := mustGeneration(t, s, "web-1"); g <= d.Generation || g != gen {
		t.Fatalf("registered again at generation %d (said %d), not above %d", g, gen, d.Generation)
	}
	var regs, ended int
	if err := s.read.QueryRow(`SELECT COUNT(*), COUNT(deleted_at) FROM node_registrations WHERE node = 'web-1'`).Scan(&regs, &ended); err != nil {
		t.Fatal(err)
	}
	if regs != 2 || ended != 1 {
		t.Fatalf("%d registrations, %d ended; want 2 and 1", regs, ended)
	}
	// The old registration's transitions are the ones before the new one began.
	var old int
	if err := s.read.QueryRow(`SELECT COUNT(*) FROM transitions t JOIN node_registrations r ON r.node = t.node
		WHERE r.deleted_at IS NOT NULL AND t.at >= r.registered_at AND t.at <= r.deleted_at`).Scan(&old); err != nil || old != 3 {
		t.Fatalf("%d transitions in the old registration (%v), want 3", old, err)
	}
}
