package db

import (
	"context"
	"fmt"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// BenchmarkRowSizes measures what a node's resources cost on disk in SQLite: 200 nodes × 100
// resources, assigned and first applied, then each structure's bytes (table or index, from
// SQLite's dbstat) per resource row. It then copies resource_states into the same table with
// the smallest keys the schema could use (integer ids for node, module and resource; the
// digest as 32 bytes rather than its text), with the same indexes, and measures that too: the
// row-size study in docs/database.md.
//
//	go test ./db -run '^$' -bench RowSizes -benchtime 1x
func BenchmarkRowSizes(b *testing.B) {
	if testdb.Postgres() {
		b.Skip("measures SQLite's pages with dbstat")
	}
	const nodes, resources = 200, 100
	s, _ := setupWith(b, Options{})
	ctx := context.Background()
	rs := make([]hq.Resource, resources)
	for i := range rs {
		rs[i] = hq.Resource{Name: fmt.Sprintf("conf-%03d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/conf-%03d", i), Content: "x\n"}
	}
	mustModule(b, s, "app", rs...)
	for i := range nodes {
		n := fmt.Sprintf("web-%05d", i)
		mustNode(b, s, n)
		mustAssign(b, s, n, "app")
		d := mustCompose(b, s, n, "bench")
		rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest}
		for _, r := range rs {
			rep.Results = append(rep.Results, hq.Result{Module: "app", Resource: r.Name, Outcome: hq.StateApplied, Attempted: true, Changed: true})
		}
		if _, err := s.Ingest(ctx, n, rep, IngestOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, stmt := range smallKeys {
		if _, err := s.write.ExecContext(ctx, stmt); err != nil {
			b.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, q := range []string{
		`SELECT 'resource_states: node ' || avg(length(node)) || ', module ' || avg(length(module)) || ', resource ' || avg(length(resource)) ||
			', spec_digest ' || avg(length(spec_digest)) || ', since ' || avg(length(since)) || ', reason ' || avg(length(reason)) FROM resource_states`,
		`SELECT 'transitions: ' || (COUNT(*) * 1.0 / ` + fmt.Sprint(nodes*resources) + `) || ' a resource, reason ' || avg(length(reason)) ||
			', at ' || avg(length(at)) FROM transitions`,
	} {
		var line string
		if err := s.read.QueryRowContext(ctx, q).Scan(&line); err != nil {
			b.Fatal(err)
		}
		b.Logf("average bytes: %s", line)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	per := float64(nodes * resources)
	today, small := 0.0, 0.0
	for rows.Next() {
		var name string
		var size int64
		if err := rows.Scan(&name, &size); err != nil {
			b.Fatal(err)
		}
		switch {
		case name == "small_resource_states" || len(name) > 22 && name[:22] == "small_resource_states_":
			small += float64(size)
		case name == "resource_states" || len(name) > 16 && name[:16] == "resource_states_" || name == "sqlite_autoindex_resource_states_1":
			today += float64(size)
		}
		if float64(size)/per >= 2 {
			b.Logf("%-24s %4.0f bytes a resource", name, float64(size)/per)
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(today/per, "B/resource-today")
	b.ReportMetric(small/per, "B/resource-small-keys")
}

// smallKeys copies resource_states into a table keyed by integers, with indexes like today's.
var smallKeys = []string{
	`CREATE TABLE small_keys_resources (id INTEGER PRIMARY KEY, module TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (module, name))`,
	`INSERT INTO small_keys_resources (module, name) SELECT DISTINCT module, resource FROM resource_states`,
	`CREATE TABLE small_resource_states (
		node_id INTEGER NOT NULL, module_id INTEGER NOT NULL, resource_id INTEGER NOT NULL,
		kind TEXT NOT NULL, spec_digest BLOB NOT NULL, position INTEGER NOT NULL, group_name TEXT NOT NULL DEFAULT '',
		state TEXT NOT NULL, since TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
		consecutive_failures INTEGER NOT NULL DEFAULT 0, failing_since TEXT, never_applied INTEGER NOT NULL DEFAULT 1,
		last_error TEXT NOT NULL DEFAULT '', hold_reason TEXT NOT NULL DEFAULT '', blocked_by TEXT NOT NULL DEFAULT '',
		retry_requested INTEGER NOT NULL DEFAULT 0, report_id INTEGER, reason TEXT NOT NULL DEFAULT '',
		PRIMARY KEY (node_id, module_id, resource_id)) WITHOUT ROWID`,
	`INSERT INTO small_resource_states SELECT n.rowid, m.rowid, k.id, r.kind, unhex(substr(r.spec_digest, 8)), r.position, r.group_name,
		r.state, r.since, r.attempts, r.consecutive_failures, r.failing_since, r.never_applied, r.last_error, r.hold_reason,
		r.blocked_by, r.retry_requested, r.report_id, r.reason
		FROM resource_states r JOIN nodes n ON n.name = r.node JOIN modules m ON m.name = r.module
		JOIN small_keys_resources k ON k.module = r.module AND k.name = r.resource`,
	`CREATE INDEX small_resource_states_retry ON small_resource_states (node_id) WHERE retry_requested = 1`,
	`CREATE INDEX small_resource_states_not_fine ON small_resource_states (state, module_id, resource_id) WHERE state NOT IN ('applied', 'pending')`,
	`CREATE INDEX small_resource_states_not_fine_by_node ON small_resource_states (node_id, state) WHERE state NOT IN ('applied', 'pending')`,
	`CREATE INDEX small_resource_states_blocked ON small_resource_states (node_id, blocked_by) WHERE blocked_by <> ''`,
}
