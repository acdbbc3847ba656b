package db

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	"github.com/pressly/goose/v3"

	"github.com/meshhq/hq/internal/testdb"
	pgmigrations "github.com/meshhq/hq/migrations/postgres"
)

// A PostgreSQL database written before the resource rows' foreign key gave way to set-based
// triggers keeps its rows and transitions, and the rules hold on them afterwards: taking the
// assignment away takes its resources with it, recorded and uncounted.
func TestPostgresMigrateKeepsResourcesAndTheirRules(t *testing.T) {
	testdb.NeedServer(t)
	ctx := context.Background()
	url := testdb.NewOn(t, "postgres")
	old := postgresAt(t, url, 10)
	for _, stmt := range []string{
		`INSERT INTO nodes (name, token_hash, generation, created_at) VALUES ('web-1', 'h1', 1, '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO modules (name, revision, created_at, updated_at) VALUES ('app', 1, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO module_revisions (module, revision, resources, resource_count, digest, created_at) VALUES ('app', 1, '[]', 2, 'sha256:x', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO assignments (node, module, assigned_at) VALUES ('web-1', 'app', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, since) VALUES
			('web-1', 'app', 'a', 'file', 'sha256:a', 0, '2026-11-01T00:00:00.000Z'),
			('web-1', 'app', 'b', 'file', 'sha256:b', 1, '2026-11-01T00:00:00.000Z')`,
		`UPDATE resource_states SET state = 'applied' WHERE resource = 'a'`,
	} {
		if _, err := old.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	old.Close()

	s := open(t, url, Options{})
	var rows, transitions, applied, pending int
	read := func() {
		t.Helper()
		if err := s.read.QueryRowContext(ctx, `SELECT
			(SELECT COUNT(*) FROM resource_states),
			(SELECT COUNT(*) FROM transitions),
			(SELECT resources_applied FROM nodes WHERE name = 'web-1'),
			(SELECT resources_pending FROM nodes WHERE name = 'web-1')`).Scan(&rows, &transitions, &applied, &pending); err != nil {
			t.Fatal(err)
		}
	}
	read()
	if rows != 2 || transitions != 3 || applied != 1 || pending != 1 {
		t.Fatalf("after migrating: %d rows, %d transitions, %d applied, %d pending; want 2, 3, 1, 1", rows, transitions, applied, pending)
	}
	if _, err := s.Unassign(ctx, "web-1", "app", nil); err != nil {
		t.Fatal(err)
	}
	read()
	if rows != 0 || transitions != 5 || applied != 0 || pending != 0 {
		t.Fatalf("after unassigning: %d rows, %d transitions, %d applied, %d pending; want 0, 5, 0, 0", rows, transitions, applied, pending)
	}
}

// postgresAt is the database at url migrated up to version, as an earlier hq left it, with a
// connection to write what that hq wrote.
func postgresAt(t *testing.T, url string, version int64) *sql.DB {
	t.Helper()
	return migratedTo(t, "pgx", url, goose.DialectPostgres, pgmigrations.FS, version)
}

func TestPostgresRolloutsFromBeforeFromRevisionsRead(t *testing.T) {
	testdb.NeedServer(t)
	url := testdb.NewOn(t, "postgres")
	old := postgresAt(t, url, 12)
	if _, err := old.Exec(oldRollout); err != nil {
		t.Fatal(err)
	}
	old.Close()
	checkOldRollout(t, open(t, url, Options{}))
}
