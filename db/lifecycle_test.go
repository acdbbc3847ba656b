package db

import (
	"context"
	"strings"
	"testing"
)

// The trigger holds the lifecycle even against SQL written by hand.
func TestLifecycleTriggerRefusesIllegalTransition(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"))
	mustAssign(t, s, "web-1", "app")

	if _, err := s.write.ExecContext(ctx, `UPDATE resource_states SET state = 'applied'`); err != nil {
		t.Fatalf("pending → applied is legal: %v", err)
	}
	_, err := s.write.ExecContext(ctx, `UPDATE resource_states SET state = 'stuck' WHERE state = 'applied'`)
	if err == nil || !strings.Contains(err.Error(), "not allowed by lifecycle") {
		t.Fatalf("applied → stuck: err = %v, want refusal by the lifecycle", err)
	}
	var state string
	if err := s.read.QueryRowContext(ctx, `SELECT state FROM resource_states`).Scan(&state); err != nil || state != "applied" {
		t.Fatalf("state = %q (%v), want applied unchanged", state, err)
	}
	var n int
	if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM transitions WHERE from_state = 'pending' AND to_state = 'applied' AND reason = 'set directly in the database'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("transitions rows for the legal update = %d (%v), want 1", n, err)
	}
	if _, err := s.write.ExecContext(ctx, `INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, state, since) VALUES ('web-1', 'app', 'b', 'file', 'x', 1, 'stuck', 'now')`); err == nil {
		t.Fatal("a row inserted as stuck was accepted; resources must enter as pending")
	}
	// Nor by replacing a row, nor by an upsert, nor under another name. An insert that does
	// nothing for a conflict inserts no row: SQLite, which checks the row once it is in, has
	// nothing to refuse, and PostgreSQL refuses it before it looks for the conflict. Either
	// way the row it conflicts with stays as it was (below).
	for _, stmt := range []string{
		`INSERT OR REPLACE INTO resource_states (node, module, resource, kind, spec_digest, position, state, since) VALUES ('web-1', 'app', 'a', 'file', 'x', 1, 'stuck', 'now')`,
		`INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, state, since) VALUES ('web-1', 'app', 'a', 'file', 'x', 1, 'stuck', 'now') ON CONFLICT DO UPDATE SET state = excluded.state`,
	} {
		if _, err := s.write.ExecContext(ctx, stmt); err == nil {
			t.Fatalf("%s: accepted", stmt)
		}
	}
	_, err = s.write.ExecContext(ctx, `INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, state, since) VALUES ('web-1', 'app', 'a', 'file', 'x', 1, 'stuck', 'now') ON CONFLICT DO NOTHING`)
	if err != nil && !strings.Contains(err.Error(), "enters the lifecycle as pending") {
		t.Fatalf("an insert that does nothing: %v", err)
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE resource_states SET resource = 'renamed', state = 'stuck'`); err == nil {
		t.Fatal("applied → stuck under a new name was accepted")
	}
	var stuck int64
	if err := s.read.QueryRowContext(ctx, `SELECT resources_stuck + resources_pending FROM nodes WHERE name = 'web-1'`).Scan(&stuck); err != nil || stuck != 0 {
		t.Fatalf("stuck and pending counted %d (%v), want 0: the refusals changed nothing", stuck, err)
	}
	if err := s.read.QueryRowContext(ctx, `SELECT state || ' ' || spec_digest FROM resource_states`).Scan(&state); err != nil || state == "" || !strings.HasPrefix(state, "applied ") || strings.HasSuffix(state, " x") {
		t.Fatalf("resource a is %q (%v), want applied with its own spec", state, err)
	}
	if err := s.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM transitions`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d transitions (%v), want 2: declared, applied", n, err)
	}
}

// Every state the lifecycle names may be left and entered somehow, and stuck only from failed.
func TestLifecycleTable(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	rows, err := s.read.Query(`SELECT from_state FROM lifecycle WHERE to_state = 'stuck'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var from []string
	for rows.Next() {
		var f string
		if err := rows.Scan(&f); err != nil {
			t.Fatal(err)
		}
		from = append(from, f)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(from) != 1 || from[0] != "failed" {
		t.Fatalf("stuck is entered from %v, want only failed", from)
	}
}

// A resource row belongs to an assignment of its module to its node, even against SQL written
// by hand: a row for no assignment is refused, and an assignment taken away takes its rows with
// it, recorded as removed and uncounted.
func TestResourcesBelongToAnAssignment(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "web-1")
	mustModule(t, s, "app", file("a", "1"), file("b", "2"))
	mustModule(t, s, "other", file("c", "3"))
	mustAssign(t, s, "web-1", "app")

	if _, err := s.write.ExecContext(ctx, `INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, since) VALUES ('web-1', 'other', 'c', 'file', 'x', 0, 'now')`); err == nil {
		t.Fatal("a resource of a module the node is not assigned was accepted")
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE assignments SET module = 'other' WHERE node = 'web-1'`); err == nil {
		t.Fatal("an assignment with resources was renamed from under them")
	}
	if _, err := s.write.ExecContext(ctx, `DELETE FROM assignments WHERE node = 'web-1' AND module = 'app'`); err != nil {
		t.Fatal(err)
	}
	var rows, removed, counted int
	if err := s.read.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM resource_states),
		(SELECT COUNT(*) FROM transitions WHERE to_state = 'removed'),
		(SELECT resources_pending + resources_applied FROM nodes WHERE name = 'web-1')`).Scan(&rows, &removed, &counted); err != nil {
		t.Fatal(err)
	}
	if rows != 0 || removed != 2 || counted != 0 {
		t.Fatalf("after the assignment went: %d resource rows, %d recorded removed, %d counted; want 0, 2, 0", rows, removed, counted)
	}
}
