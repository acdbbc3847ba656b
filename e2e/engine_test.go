package e2e

import (
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/meshhq/hq/internal/testdb"
)

// keyFiles remembers the signing key file of each PostgreSQL database a test made: the
// controllers sharing a database share its key, which on SQLite lives beside the file.
var keyFiles sync.Map

// dbEnv is the environment that points hq at db: HQ_DB, and on PostgreSQL HQ_KEY_FILE too.
func dbEnv(t testing.TB, db string) []string {
	env := []string{"HQ_DB=" + db}
	if testdb.Driver(db) == "pgx" {
		env = append(env, "HQ_KEY_FILE="+keyFileOf(t, db), "HQ_SECRETS_KEY_FILE="+keyFileOf(t, db)+".secrets")
	}
	return env
}

// keyFileOf is where the controllers of db keep their signing key: beside a SQLite file, or a
// file the harness names for a PostgreSQL database.
func keyFileOf(t testing.TB, db string) string {
	if testdb.Driver(db) == "sqlite" {
		return db + ".key"
	}
	key, _ := keyFiles.LoadOrStore(db, filepath.Join(t.TempDir(), "hq.key"))
	return key.(string)
}

// openRaw opens a test's database as an operator would, with the engine's own driver, to
// check what the controller wrote or to change it behind its back.
func openRaw(t testing.TB, db string) *sql.DB {
	t.Helper()
	dsn := db
	if testdb.Driver(db) == "sqlite" {
		dsn = "file:" + db + "?_pragma=busy_timeout(5000)"
	}
	raw, err := sql.Open(testdb.Driver(db), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// sqliteOnly skips a test of what only a SQLite file has (its bytes on disk, hq backup).
func sqliteOnly(t testing.TB, why string) {
	if testdb.Postgres() {
		t.Skip("on PostgreSQL: " + why)
	}
}
