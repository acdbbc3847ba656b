package db

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/migrations"
)

// A database written by an earlier schema keeps every row through the migrations after it.
// The mesh here is made at schema version 2, the first that ever shipped.
func TestMigrateKeepsWhatAnEarlierSchemaWrote(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hq.db")
	old, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, old, migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`INSERT INTO nodes (name, token_hash, generation, applied_generation, created_at) VALUES ('web-1', 'h1', 3, 3, '2026-11-01T00:00:00.000Z'), ('web-2', 'h2', 1, 0, '2026-11-02T00:00:00.000Z')`,
		`INSERT INTO modules (name, revision, created_at, updated_at) VALUES ('app', 1, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO module_revisions (module, revision, resources, resource_count, digest, created_at) VALUES ('app', 1, '[]', 1, 'sha256:x', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO assignments (node, module, assigned_at) VALUES ('web-1', 'app', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, since) VALUES ('web-1', 'app', 'a', 'file', 'sha256:y', 0, '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO sends (node, generation, digest, resources, composed_by, sent_at) VALUES ('web-1', 3, 'sha256:z', 1, 'ctl', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO reports (node, generation, digest, summary, outcome_digest, at, last_at) VALUES ('web-1', 3, 'sha256:z', 'applied 1 resource(s)', 'o', '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`,
	} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	tables := []string{"nodes", "modules", "module_revisions", "assignments", "resource_states", "transitions", "sends", "reports"}
	count := func(db *sql.DB, table string) int {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := map[string]int{}
	for _, table := range tables {
		before[table] = count(old, table)
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, table := range tables {
		if got := count(s.read, table); got != before[table] {
			t.Errorf("%s: %d rows after migrating, %d before", table, got, before[table])
		}
	}
	// Every node that was registered has its registration, and none reads as deleted.
	if n := count(s.read, "node_registrations"); n != 2 {
		t.Errorf("%d registrations, want 2", n)
	}
	v, err := s.GetNode(ctx, "web-1")
	if err != nil || v.Generation != 3 || v.AppliedGeneration != 3 {
		t.Fatalf("web-1 after migrating: %+v, %v", v, err)
	}
	// Nodes from before labels have none, and a placement finds them by their new labels,
	// keeping the operator's own assignment.
	if len(v.Labels) != 0 || len(v.Vars) != 0 || v.Assignments[0].Source != SourceOperator {
		t.Fatalf("web-1 after migrating: labels %v vars %v assignments %+v", v.Labels, v.Vars, v.Assignments)
	}
	if _, err := s.SetLabels(ctx, "web-2", map[string]string{"role": "web"}, nil); err != nil {
		t.Fatal(err)
	}
	if p, err := s.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web"}); err != nil || p.Assigned != 1 {
		t.Fatalf("placement after migrating: %+v, %v", p, err)
	}
}
