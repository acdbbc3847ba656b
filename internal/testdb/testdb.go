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
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", which Driver names
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
