// Package testdb gives each test a database of its own on the engine the run is for: a SQLite
// file by default, or, with HQ_TEST_POSTGRES set to a server's URL, a schema of its own on that
// PostgreSQL server, so the same tests hold both engines to the same behaviour.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Env names the PostgreSQL server the tests run against; unset, they run on SQLite.
const Env = "HQ_TEST_POSTGRES"

// Postgres reports whether this run is for PostgreSQL.
func Postgres() bool { return os.Getenv(Env) != "" }

// New returns what HQ_DB should be for a fresh, empty database that is gone when the test ends.
func New(t testing.TB) string {
	t.Helper()
	server := os.Getenv(Env)
	if server == "" {
		return filepath.Join(t.TempDir(), "hq.db")
	}
	b := make([]byte, 8)
	rand.Read(b)
	schema := "test_" + hex.EncodeToString(b)
	exec(t, server, "CREATE SCHEMA "+schema)
	// Registered before the test opens its store, so it runs after the store is closed.
	t.Cleanup(func() { exec(t, server, "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(server)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs one statement on the server outside any test's schema.
func exec(t testing.TB, server, stmt string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
