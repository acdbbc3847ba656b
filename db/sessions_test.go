package db

import (
	"context"
	"github.com/meshhq/hq"
	"testing"
	"time"
)

func TestSessions(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	valid := func(secret string) bool {
		t.Helper()
		ok, err := s.SessionValid(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	rows := func() int {
		t.Helper()
		var n int
		if err := s.read.QueryRowContext(ctx, "SELECT COUNT(*) FROM web_sessions").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := s.CreateSession(ctx, "one", c.Now().Add(time.Hour), hq.Identity{Operator: hq.BootstrapAdmin, Role: hq.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(ctx, "two", c.Now().Add(3*time.Hour), hq.Identity{Operator: hq.BootstrapAdmin, Role: hq.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if !valid("one") || !valid("two") || valid("three") || valid("") {
		t.Fatal("only the sessions created are valid")
	}
	var stored string
	if err := s.read.QueryRowContext(ctx, "SELECT id_hash FROM web_sessions LIMIT 1").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored == "" || stored == "one" || stored == "two" {
		t.Fatalf("the session secret is stored as %q", stored)
	}
	if err := s.DeleteSession(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	if valid("two") {
		t.Fatal("a deleted session is still valid")
	}
	if err := s.DeleteSession(ctx, "two"); err != nil {
		t.Fatalf("deleting again: %v", err)
	}
	c.Advance(time.Hour)
	if valid("one") {
		t.Fatal("an expired session is still valid")
	}
	if rows() != 1 {
		t.Fatalf("%d row(s) before pruning, want the expired one", rows())
	}
	if err := s.CreateSession(ctx, "four", c.Now().Add(time.Hour), hq.Identity{Operator: hq.BootstrapAdmin, Role: hq.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if rows() != 1 || !valid("four") {
		t.Fatalf("%d row(s) after a new session, want only it: the expired one is pruned", rows())
	}
}
