// Package sqlite is the store's embedded engine: one file, written through one connection, in
// WAL mode. Importing it registers the engine as "sqlite".
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite" // registers database/sql's "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/db/sqlite/internal/sqlitesqlc"
	"github.com/meshhq/hq/migrations"
)

func init() {
	driver.Register("sqlite", func(ctx context.Context, path string) (driver.Engine, error) { return Open(ctx, path) })
}

// engine is the embedded default: one file, written through one connection.
type engine struct {
	path        string
	write, read *sql.DB
	// checkpointer is the connection the log is checkpointed on (checkpoint.go).
	checkpointer *sql.DB
	// prepared holds every query prepared once on each pool: modernc's SQLite otherwise
	// compiles each statement anew on every call.
	prepared map[*sql.DB]*sqlitesqlc.Queries
}

// dsn sets the pragmas in the connection string so that every pooled connection gets them.
func dsn(path string, writer bool) string {
	q := url.Values{}
	// synchronous FULL: a generation, once handed to a host, must survive a power cut, or a
	// later change could reuse it and the host would refuse it as a rewrite.
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	if writer {
		// Writers take the lock at BEGIN, so a read-then-write transaction cannot be overtaken
		// by another process between its read and its write.
		q.Set("_txlock", "immediate")
		// A statement that may fail halfway (a CHECK, a trigger's refusal) keeps the pages it
		// changed in a statement journal, to undo only itself. Past 64 KiB SQLite moves that
		// journal to a temporary file, which a node's 500 rows pass every time; in memory it
		// is bounded by the pages one statement touches.
		q.Add("_pragma", "temp_store(MEMORY)")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating it 0600 if needed) and migrates the SQLite database at path.
func Open(ctx context.Context, path string) (driver.Engine, error) {
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	e := &engine{path: path, prepared: map[*sql.DB]*sqlitesqlc.Queries{}}
	var err error
	if e.write, err = e.pool(1, true); err == nil {
		err = Migrate(ctx, e.write)
	}
	if err == nil {
		// Every read connection is kept: database/sql keeps two idle by default, and under
		// load it closed the others as they were given back and opened new ones, each reading
		// the schema and preparing its statements again.
		e.read, err = e.pool(4, false)
	}
	if err == nil {
		e.checkpointer, err = e.pool(1, false)
	}
	for _, pool := range []*sql.DB{e.write, e.read} {
		if err != nil {
			break
		}
		var q *sqlitesqlc.Queries
		if q, err = sqlitesqlc.Prepare(ctx, pool); err != nil {
			err = fmt.Errorf("prepare queries: %w", err)
		}
		e.prepared[pool] = q
	}
	if err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// pool opens a pool of n connections, all kept.
func (e *engine) pool(n int, writer bool) (*sql.DB, error) {
	p, err := sql.Open("sqlite", dsn(e.path, writer))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", e.path, err)
	}
	p.SetMaxOpenConns(n)
	p.SetMaxIdleConns(n)
	return p, nil
}

// createPrivate creates the database file with mode 0600 when it does not exist yet. SQLite
// would create it 0644 and gives its WAL and shared-memory files the mode of the main file,
// and module contents may be secrets. An existing file keeps the mode its operator gave it.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return f.Close()
}

// Migrate applies every pending migration to a SQLite database.
func Migrate(ctx context.Context, db *sql.DB) error {
	return driver.Migrate(ctx, goose.DialectSQLite3, db, migrations.FS)
}

func (e *engine) Write() *sql.DB { return e.write }
func (e *engine) Read() *sql.DB  { return e.read }

func (e *engine) Queries(pool *sql.DB, tx *sql.Tx) driver.Queries {
	if tx != nil {
		return queries{e.prepared[pool].WithTx(tx)}
	}
	return queries{e.prepared[pool]}
}

// LockWrites has nothing to do: the write pool begins IMMEDIATE, which takes SQLite's one
// write lock at BEGIN.
func (e *engine) LockWrites(context.Context, *sql.Tx) error { return nil }

func (e *engine) ReadOptions() *sql.TxOptions { return nil }

// DiskFull reports whether err is SQLite's "database or disk is full".
func (e *engine) DiskFull(err error) bool {
	se, ok := errors.AsType[*sqlite.Error](err)
	return ok && se.Code()&0xff == sqlite3.SQLITE_FULL
}

func (e *engine) Sizes(context.Context) (database, wal int64, err error) {
	if database, err = fileSize(e.path); err != nil {
		return 0, 0, err
	}
	wal, err = fileSize(e.path + "-wal")
	return database, wal, err
}

// fileSize is a file's size, 0 when it does not exist (a WAL between checkpoints may not).
func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Watch is nil: SQLite has no way to tell one process of another's commits, so the store
// looks at every node's generation each period.
func (e *engine) Watch(*slog.Logger, func(string), func()) func(context.Context, func()) {
	return nil
}

func (e *engine) Close() error {
	var errs []error
	for _, q := range e.prepared {
		if q != nil {
			errs = append(errs, q.Close())
		}
	}
	for _, p := range []*sql.DB{e.checkpointer, e.read, e.write} {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	return errors.Join(errs...)
}

// list is a list of names as this engine's queries take it: a JSON array, [] when empty
// (json_each reads it).
func list(names []string) string { return driver.JSONList(names) }
