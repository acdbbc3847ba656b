package db

import (
	"context"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// beforeOperators is what an hq from before operators wrote: a page session (every one then
// HQ_ADMIN_TOKEN's), a rollout, and an assignment taken, with a module's revision.
var beforeOperators = []string{
	`INSERT INTO web_sessions (id_hash, created_at, expires_at) VALUES ('` + hashToken("old-session") + `', '2026-11-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z')`,
	`INSERT INTO modules (name, revision, created_at, updated_at) VALUES ('app', 1, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`,
	`INSERT INTO module_revisions (module, revision, resources, resource_count, digest, created_at) VALUES ('app', 1, '[]', 0, 'd', '2026-11-01T00:00:00.000Z')`,
	oldRollout,
	`INSERT INTO nodes (name, token_hash, generation, applied_generation, created_at) VALUES ('web-1', 'h1', 1, 1, '2026-11-01T00:00:00.000Z')`,
	`INSERT INTO assignments (node, module, taken, assigned_at, revision) VALUES ('web-1', 'app', 1, '2026-11-01T00:00:00.000Z', 1)`,
}

// checkBeforeOperators: the old session is the bootstrap admin's, the old revision, rollout and
// assignment read with no author (the assignment with when it was made), pausing the rollout
// records its author, and the audit log takes rows.
func checkBeforeOperators(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	id, ok, err := s.Session(ctx, "old-session")
	if err != nil || !ok || id.Operator != hq.BootstrapAdmin || id.Role != hq.RoleAdmin || id.TokenID != 0 {
		t.Fatalf("an old session after migrating: %+v %v %v", id, ok, err)
	}
	rev, err := s.GetRevision(ctx, "app", 1)
	if err != nil || rev.PushedBy != "" || rev.Message != "" {
		t.Fatalf("an old revision: %+v %v", rev, err)
	}
	v, err := s.GetNode(ctx, "web-1")
	if err != nil || len(v.Assignments) != 1 {
		t.Fatalf("an old node: %+v %v", v, err)
	}
	if a := v.Assignments[0]; !a.Taken || a.AssignedBy != "" || a.TakenBy != "" || !a.AssignedAt.Equal(hq.ParseTime("2026-11-01T00:00:00.000Z")) {
		t.Fatalf("an old assignment: %+v", a)
	}
	r, err := s.PauseRollout(hq.WithIdentity(ctx, hq.Identity{Operator: "alice", Role: hq.RoleAdmin}), 1)
	if err != nil || r.SteeredBy != "alice" || r.Steered != "paused" {
		t.Fatalf("pausing an old rollout: %+v %v", r, err)
	}
	if err := s.Audit(ctx, hq.AuditEntry{Operator: "alice", Role: hq.RoleAdmin, Via: hq.ViaAPI, Action: "rollout.pause", Object: "rollout/1", Outcome: 200}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.ListAudit(ctx, AuditFilter{}); err != nil || len(p.Entries) != 1 {
		t.Fatalf("the audit log after migrating: %+v %v", p, err)
	}
}

func TestMigrateToOperatorsKeepsSessionsAndRevisions(t *testing.T) {
	path, old := databaseAt(t, 17)
	for _, q := range beforeOperators {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()
	checkBeforeOperators(t, open(t, path, Options{}))
}

func TestPostgresMigrateToOperatorsKeepsSessionsAndRevisions(t *testing.T) {
	testdb.NeedServer(t)
	url := testdb.NewOn(t, "postgres")
	old := postgresAt(t, url, 13)
	for _, q := range beforeOperators {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()
	checkBeforeOperators(t, open(t, url, Options{}))
}
