// Package testdb gives each test a database of its own on the engine the run is for: a SQLite
// file by default, or, with HQ_TEST_ENGINE=postgres, a schema of its own on the PostgreSQL
// server HQ_TEST_POSTGRES names, so the same tests hold both engines to the same behaviour.
// Tests that compare the engines (db/drivertest) use the server whenever it is named.
package testdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", which Driver names
)

// Env names the PostgreSQL server tests may use; EngineEnv says which engine a run is for:
// "postgres" runs the whole suite there, anything else on SQLite.
const (
	Env       = "HQ_TEST_POSTGRES"
	EngineEnv = "HQ_TEST_ENGINE"
)

// Postgres reports whether this run is for PostgreSQL.
func Postgres() bool { return os.Getenv(EngineEnv) == "postgres" }

// Server is the PostgreSQL server's URL, "" when none is named.
func Server() string { return os.Getenv(Env) }

// New returns what HQ_DB should be for a fresh, empty database on the run's engine that is gone
// when the test ends.
func New(t testing.TB) string {
	t.Helper()
	if Postgres() {
		return NewOn(t, "postgres")
	}
	return NewOn(t, "sqlite")
}

// NewOn is New on the engine named ("sqlite" or "postgres"), whatever the run is for.
func NewOn(t testing.TB, engine string) string {
	t.Helper()
	if engine == "sqlite" {
		return filepath.Join(t.TempDir(), "hq.db")
	}
	server := Server()
	if server == "" {
		t.Fatalf("a PostgreSQL database is wanted but %s names no server", Env)
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

// Rebind writes a test's ? placeholders as PostgreSQL's $1, $2, … when the run is for it.
func Rebind(q string) string {
	if !Postgres() {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Pick is the statement for the engine the run is for, where the two dialects differ.
func Pick(sqlite, postgres string) string {
	if Postgres() {
		return postgres
	}
	return sqlite
}

// Driver is the database/sql driver that opens hqDB: "pgx" for a PostgreSQL URL, else "sqlite".
func Driver(hqDB string) string {
	if strings.HasPrefix(hqDB, "postgres://") || strings.HasPrefix(hqDB, "postgresql://") {
		return "pgx"
	}
	return "sqlite"
}

// NeedServer skips a test that needs a PostgreSQL server when none is named, outside CI; in CI,
// which always starts one, a missing server fails the test instead of hiding it.
func NeedServer(t testing.TB) {
	t.Helper()
	if Server() != "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s names no PostgreSQL server; CI starts one (.ci/postgres)", Env)
	}
	t.Skipf("needs a PostgreSQL server: set %s (eval \"$(bash .ci/postgres start DIR)\")", Env)
}
