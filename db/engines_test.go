package db

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshhq/hq/internal/testdb"
)

// Every table and view an operator queries has the same name and columns, in the same order,
// on both engines. It runs wherever a PostgreSQL server is named, as in CI.
func TestEnginesHaveTheSameTablesAndColumns(t *testing.T) {
	testdb.NeedServer(t)
	ctx := context.Background()
	lite, err := Open(ctx, filepath.Join(t.TempDir(), "hq.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg, err := Open(ctx, testdb.NewOn(t, "postgres"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	// audit_prune is SQLite's gate for the audit log's prune, a row its triggers read; PostgreSQL
	// keeps the same gate in a setting of the pruning transaction (docs/database.md).
	want := columns(t, lite.read, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type IN ('table', 'view') AND m.name NOT IN ('sqlite_sequence', 'goose_db_version', 'audit_prune') ORDER BY m.name, p.cid`)
	got := columns(t, pg.read, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name <> 'goose_db_version' ORDER BY table_name, ordinal_position`)
	if len(want) < 15 {
		t.Fatalf("only %d tables and views on SQLite: %v", len(want), want)
	}
	for name, cols := range want {
		if !slices.Equal(got[name], cols) {
			t.Errorf("%s: SQLite has %v, PostgreSQL %v", name, cols, got[name])
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s is on PostgreSQL only", name)
		}
	}
}

func columns(t *testing.T, db *sql.DB, q string) map[string][]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		out[table] = append(out[table], strings.ToLower(col))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
