package db

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/internal/testdb"
)

// writeBeforeContainerStatus writes, through old (a database of the schema before
// container_status), a node with a container and a file resource, one applied and one failed.
func writeBeforeContainerStatus(t *testing.T, old *sql.DB) {
	t.Helper()
	for _, stmt := range []string{
		`INSERT INTO nodes (name, token_hash, generation, created_at) VALUES ('web-1', 'h1', 1, '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO modules (name, revision, created_at, updated_at) VALUES ('app', 1, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO module_revisions (module, revision, resources, resource_count, digest, created_at) VALUES ('app', 1, '[]', 2, 'sha256:x', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO assignments (node, module, assigned_at) VALUES ('web-1', 'app', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, since) VALUES
			('web-1', 'app', 'web', 'container', 'sha256:w', 0, '2026-11-01T00:00:00.000Z'),
			('web-1', 'app', 'conf', 'file', 'sha256:c', 1, '2026-11-01T00:00:00.000Z')`,
		`UPDATE resource_states SET state = 'applied' WHERE resource = 'web'`,
		`UPDATE resource_states SET state = 'failed', last_error = 'boom' WHERE resource = 'conf'`,
	} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	old.Close()
}

// checkAfterContainerStatus checks that s, opened on what writeBeforeContainerStatus wrote,
// lost nothing in migrating, and that its container resource takes a status, which goes with it.
func checkAfterContainerStatus(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	rows := strs(t, s.read, `SELECT resource || ' ' || kind || ' ' || state || ' ' || last_error FROM resource_states ORDER BY position`)
	if want := []string{"web container applied ", "conf file failed boom"}; !slices.Equal(rows, want) {
		t.Fatalf("resource rows after migrating: %q, want %q", rows, want)
	}
	if tr := strs(t, s.read, `SELECT CAST(COUNT(*) AS TEXT) FROM transitions`); !slices.Equal(tr, []string{"4"}) {
		t.Fatalf("transitions after migrating: %v, want 4", tr)
	}
	if cs := containerStatuses(t, s, "web-1"); len(cs) != 0 {
		t.Fatalf("statuses made by migrating: %+v", cs)
	}
	err := s.inTx(ctx, func(q driver.Queries) error {
		for _, r := range []string{"web", "conf"} {
			if err := q.ContainerStatusRecord(ctx, driver.ContainerStatusRecordParams{ContainerID: "4f1c", Health: "none",
				Since: "2026-11-30T00:00:00.000Z", Node: "web-1", Module: "app", Resource: r}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cs := containerStatuses(t, s, "web-1"); len(cs) != 1 || cs[0].Resource != "web" || cs[0].ContainerID != "4f1c" {
		t.Fatalf("statuses after recording the container's and the file's: %+v, want the container's alone", cs)
	}
	if _, err := s.Unassign(ctx, "web-1", "app", nil); err != nil {
		t.Fatal(err)
	}
	if cs := containerStatuses(t, s, "web-1"); len(cs) != 0 {
		t.Fatalf("statuses after unassigning: %+v", cs)
	}
}

// A SQLite database of the schema before container_status keeps its resources and history, and
// its container resources take statuses after.
func TestMigrateToContainerStatusKeepsResources(t *testing.T) {
	path, old := databaseAt(t, 15)
	writeBeforeContainerStatus(t, old)
	checkAfterContainerStatus(t, open(t, path, Options{}))
}

// The same on PostgreSQL.
func TestPostgresMigrateToContainerStatusKeepsResources(t *testing.T) {
	testdb.NeedServer(t)
	url := testdb.NewOn(t, "postgres")
	writeBeforeContainerStatus(t, postgresAt(t, url, 11))
	checkAfterContainerStatus(t, open(t, url, Options{}))
}
