package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/migrations"
)

// A database written by an earlier schema keeps every row through the migrations after it.
// The mesh here is made at schema version 2, the first that ever shipped.
func TestMigrateKeepsWhatAnEarlierSchemaWrote(t *testing.T) {
	ctx := context.Background()
	path, old := databaseAt(t, 2)
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

	s, err := Open(ctx, path, Options{})
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

// Revisions uploaded before module_revision_resources get their rows when the database is
// next opened, with the digests hq computes, and assigning them copies those rows.
func TestOpenFillsTheRowsOfEarlierRevisions(t *testing.T) {
	ctx := context.Background()
	path, old := databaseAt(t, 10)
	rs := []hq.Resource{
		{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "a=1\n"},
		{Name: "restart", Kind: hq.KindAction, Command: []string{"/bin/true"}, Group: "g"},
	}
	body, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`INSERT INTO nodes (name, token_hash, created_at) VALUES ('web-1', 'h1', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO node_registrations (node, registered_at) VALUES ('web-1', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO modules (name, revision, created_at, updated_at) VALUES ('app', 1, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z'), ('empty', 1, '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO module_revisions (module, revision, resources, resource_count, digest, created_at) VALUES ('app', 1, '` + string(body) + `', 2, 'sha256:x', '2026-11-01T00:00:00.000Z'), ('empty', 1, '[]', 0, 'sha256:y', '2026-11-01T00:00:00.000Z')`,
	} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	old.Close()

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strs(t, s.read, `SELECT module || ' ' || revision || ' ' || resource || ' ' || position || ' ' || kind || ' ' || spec_digest || ' [' || group_name || ']'
		FROM module_revision_resources ORDER BY position`)
	want := []string{
		fmt.Sprintf("app 1 conf 0 file %s []", rs[0].Digest()),
		fmt.Sprintf("app 1 restart 1 action %s [g]", rs[1].Digest()),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("module_revision_resources after opening:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Opened again (the rows are there: nothing is missing), assigning the revision copies them.
	s.Close()
	if s, err = Open(ctx, path, Options{}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Assign(ctx, "web-1", "app", nil, nil); err != nil {
		t.Fatal(err)
	}
	declared := strs(t, s.read, `SELECT resource || ' ' || spec_digest || ' ' || state FROM resource_states WHERE node = 'web-1' ORDER BY position`)
	if want := []string{"conf " + rs[0].Digest() + " pending", "restart " + rs[1].Digest() + " pending"}; !slices.Equal(declared, want) {
		t.Fatalf("web-1's resources after assigning an earlier revision: %v, want %v", declared, want)
	}
}

// databaseAt is a new database file migrated up to version, as an earlier hq left it, with
// the connection that wrote it.
func databaseAt(t *testing.T, version int64) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hq.db")
	return path, migratedTo(t, "sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)", goose.DialectSQLite3, migrations.FS, version)
}

// migratedTo opens source with driverName and applies the migrations of fsys up to version.
func migratedTo(t *testing.T, driverName, source string, dialect goose.Dialect, fsys fs.FS, version int64) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, source)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(dialect, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return db
}

// strs reads the one text column query selects.
func strs(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Sends recorded before sends kept their signature are believed by send id, generation and
// digest, as they were; a send recorded since is believed only with the signature it was sent with.
func TestSendsFromBeforeSignaturesAreStillBelieved(t *testing.T) {
	ctx := context.Background()
	path, old := databaseAt(t, 11)
	for _, stmt := range []string{
		`INSERT INTO nodes (name, token_hash, generation, applied_generation, created_at) VALUES ('web-1', 'h1', 1, 0, '2026-11-01T00:00:00.000Z')`,
		`INSERT INTO sends (node, generation, digest, resources, composed_by, sent_at) VALUES ('web-1', 1, 'sha256:z', 0, 'ctl', '2026-11-01T00:00:00.000Z')`,
	} {
		if _, err := old.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	old.Close()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := strs(t, s.read, `SELECT signature FROM sends`); len(got) != 1 || got[0] != "" {
		t.Fatalf("signatures after migrating: %q, want one empty", got)
	}
	if _, err := s.Ingest(ctx, "web-1", hq.Report{SendID: 1, Generation: 1, Digest: "sha256:z", Signature: "anything", Results: []hq.Result{}}, IngestOptions{}); err != nil {
		t.Fatalf("a report of a send from before signatures: %v", err)
	}
	d, err := s.ComposeSigned(ctx, "web-1", "ctl", func(d *hq.Declaration) { d.Signature = "c2lnbmVk" })
	if err != nil {
		t.Fatal(err)
	}
	rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Signature: "b3RoZXI=", Results: []hq.Result{}}
	if _, err := s.Ingest(ctx, "web-1", rep, IngestOptions{}); hq.ErrorCode(err) != hq.CodeInvalid {
		t.Fatalf("a report with another signature than its send's: %v, want invalid", err)
	}
	rep.Signature = d.Signature
	if _, err := s.Ingest(ctx, "web-1", rep, IngestOptions{}); err != nil {
		t.Fatalf("a report with its send's signature: %v", err)
	}
}

// A node registered before hosts said what they run keeps its row, with nothing said yet; its
// hostd's next report that says fills it in.
func TestNodesFromBeforeHostFactsKeepTheirRows(t *testing.T) {
	ctx := context.Background()
	path, old := databaseAt(t, 12)
	if _, err := old.Exec(`INSERT INTO nodes (name, token_hash, generation, applied_generation, created_at, labels) VALUES ('web-1', 'h1', 2, 2, '2026-11-01T00:00:00.000Z', '{"role":"web"}')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	s := open(t, path, Options{})
	v, err := s.GetNode(ctx, "web-1")
	if err != nil {
		t.Fatal(err)
	}
	if v.Generation != 2 || v.Labels["role"] != "web" || v.Host != nil {
		t.Fatalf("after migrating: generation %d, labels %v, host %+v; want 2, role=web, none", v.Generation, v.Labels, v.Host)
	}
	booted := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	host := &hq.HostFacts{HostdVersion: "v1.2.3", OS: "Debian GNU/Linux 13 (trixie)", Arch: "amd64", BootedAt: booted}
	if _, err := s.Ingest(ctx, "web-1", hq.Report{Generation: 0, Host: host, Results: []hq.Result{}}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	if v, err = s.GetNode(ctx, "web-1"); err != nil {
		t.Fatal(err)
	}
	if v.Host == nil || *v.Host != *host {
		t.Fatalf("host facts %+v, want %+v", v.Host, host)
	}
}

// oldRollout is a rollout as a schema from before its from-revisions, promotion and rollback
// wrote it.
const oldRollout = `INSERT INTO rollouts (module, placement, from_revision, to_revision, policy, created_at, updated_at)
	VALUES ('app', 'web', 2, 3, '{"canary":1,"max_unavailable":1,"failure_budget":0,"progress_deadline":"10m","auto_revert":false}',
	'2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z')`

// checkOldRollout checks that a rollout from before from_revisions reads as moving from its
// from_revision, neither promoted nor a rollback, and still pauses.
func checkOldRollout(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	r, err := s.GetRollout(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.FromRevisions) != 1 || r.FromRevisions[0] != 2 || r.Promoted || r.RollbackOf != 0 || r.Revisions() != "r2→r3" {
		t.Fatalf("an older rollout after migrating: %+v", r)
	}
	if r, err = s.PauseRollout(ctx, 1); err != nil || r.State != hq.RolloutPaused {
		t.Fatalf("pausing it: %+v, %v", r, err)
	}
}

func TestRolloutsFromBeforeFromRevisionsRead(t *testing.T) {
	path, old := databaseAt(t, 16)
	if _, err := old.Exec(oldRollout); err != nil {
		t.Fatal(err)
	}
	old.Close()
	checkOldRollout(t, open(t, path, Options{}))
}
