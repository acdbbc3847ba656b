package db

import (
	"context"
	"database/sql"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// heldBeforeHeldFound is a held resource as a schema from before held_found wrote it.
var heldBeforeHeldFound = []string{
	`INSERT INTO nodes (name, token_hash, generation, created_at) VALUES ('web-1', 'h1', 1, '2026-11-01T00:00:00.000Z')`,
	`INSERT INTO modules (name, revision, created_at, updated_at) VALUES ('app', 1, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`,
	`INSERT INTO module_revisions (module, revision, resources, resource_count, digest, created_at) VALUES ('app', 1, '[]', 1, 'sha256:x', '2026-11-01T00:00:00.000Z')`,
	`INSERT INTO assignments (node, module, assigned_at) VALUES ('web-1', 'app', '2026-11-01T00:00:00.000Z')`,
	`INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, since) VALUES ('web-1', 'app', 'conf', 'file', 'sha256:a', 0, '2026-11-01T00:00:00.000Z')`,
	`UPDATE resource_states SET state = 'held', hold_reason = 'would overwrite /etc/conf' WHERE resource = 'conf'`,
}

// checkHeldAfterHeldFound checks that a row held before held_found reads as held with nothing
// said of what was found, takes what a report says, and leaves held only forgetting it.
func checkHeldAfterHeldFound(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	holds := func() []hq.Hold {
		t.Helper()
		v, err := s.GetNode(ctx, "web-1")
		if err != nil {
			t.Fatal(err)
		}
		return v.Holds
	}
	if h := holds(); len(h) != 1 || h[0].Reason != "would overwrite /etc/conf" || h[0].Found != nil {
		t.Fatalf("a hold from before held_found after migrating: %+v", h)
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE resource_states SET held_found = 'theirs' WHERE resource = 'conf'`); err != nil {
		t.Fatal(err)
	}
	if h := holds(); len(h) != 1 || h[0].Found == nil || h[0].Found.Text != "theirs" {
		t.Fatalf("after its found content was stored: %+v", h)
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE resource_states SET state = 'applied' WHERE resource = 'conf'`); err == nil {
		t.Fatal("the row left held keeping what was found")
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE resource_states SET state = 'applied', held_found = NULL WHERE resource = 'conf'`); err != nil {
		t.Fatal(err)
	}
}

func TestHeldFromBeforeHeldFoundReads(t *testing.T) {
	path, old := databaseAt(t, 17)
	execAll(t, old, heldBeforeHeldFound)
	old.Close()
	checkHeldAfterHeldFound(t, open(t, path, Options{}))
}

func TestPostgresHeldFromBeforeHeldFoundReads(t *testing.T) {
	testdb.NeedServer(t)
	url := testdb.NewOn(t, "postgres")
	old := postgresAt(t, url, 13)
	execAll(t, old, heldBeforeHeldFound)
	old.Close()
	checkHeldAfterHeldFound(t, open(t, url, Options{}))
}

func execAll(t *testing.T, db *sql.DB, stmts []string) {
	t.Helper()
	for _, stmt := range stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}
