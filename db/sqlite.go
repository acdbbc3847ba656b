package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/meshhq/hq/db/internal/dbsqlc"
	"github.com/meshhq/hq/migrations"
)

// sqliteEngine is the embedded default: one file, written through one connection.
type sqliteEngine struct {
	path string
	// checkpointer is the connection the log is checkpointed on (checkpoint.go).
	checkpointer *sql.DB
	// prepared holds every query prepared once on each pool: modernc's SQLite otherwise
	// compiles each statement anew on every call.
	prepared map[*sql.DB]*dbsqlc.Queries
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
		// journal to a temporary file, which a node's 500 rows pass every time: in memory it
		// is bounded by the pages one statement touches, and the benchmarks of assigning and
		// first applying 500 resources cost about a tenth less CPU.
		q.Add("_pragma", "temp_store(MEMORY)")
	}
	return "file:" + path + "?" + q.Encode()
}

func openSQLite(ctx context.Context, path string, opt Options) (*Store, error) {
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	write, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	write.SetMaxOpenConns(1)
	if err := Migrate(ctx, write); err != nil {
		write.Close()
		return nil, err
	}
	read, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	read.SetMaxOpenConns(4)
	// Every connection is kept: database/sql keeps two idle by default, and under load it
	// closed the others as they were given back and opened new ones, each reading the schema
	// and preparing its statements again.
	read.SetMaxIdleConns(4)
	checkpoints, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	checkpoints.SetMaxOpenConns(1)
	eng := &sqliteEngine{path: path, checkpointer: checkpoints, prepared: map[*sql.DB]*dbsqlc.Queries{}}
	for _, pool := range []*sql.DB{write, read} {
		q, err := dbsqlc.Prepare(ctx, pool)
		if err != nil {
			eng.close()
			write.Close()
			read.Close()
			return nil, fmt.Errorf("prepare queries: %w", err)
		}
		eng.prepared[pool] = q
	}
	return newStore(path, eng, write, read, opt), nil
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
	return migrate(ctx, goose.DialectSQLite3, db, migrations.FS)
}

// migrate applies every pending migration of files, on either engine.
func migrate(ctx context.Context, dialect goose.Dialect, db *sql.DB, files fs.FS, opts ...goose.ProviderOption) error {
	p, err := goose.NewProvider(dialect, db, files, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

func (e *sqliteEngine) queries(pool *sql.DB, tx *sql.Tx) dbsqlc.Querier {
	if tx != nil {
		return e.prepared[pool].WithTx(tx)
	}
	return e.prepared[pool]
}

// lockWrites has nothing to do: the write pool begins IMMEDIATE, which takes SQLite's one
// write lock at BEGIN.
func (e *sqliteEngine) lockWrites(context.Context, *sql.Tx) error { return nil }

func (e *sqliteEngine) readOptions() *sql.TxOptions { return nil }

// diskFull reports whether err is SQLite's "database or disk is full".
func (e *sqliteEngine) diskFull(err error) bool {
	se, ok := errors.AsType[*sqlite.Error](err)
	return ok && se.Code()&0xff == sqlite3.SQLITE_FULL
}

func (e *sqliteEngine) sizes(context.Context, *sql.DB) (database, wal int64, err error) {
	if database, err = fileSize(e.path); err != nil {
		return 0, 0, err
	}
	wal, err = fileSize(e.path + "-wal")
	return database, wal, err
}

// watch is the store's per-period look at every node's generation: SQLite has no way to tell
// one process of another's commits.
func (e *sqliteEngine) watch(s *Store) func(ctx context.Context, ready func()) {
	return s.watchGenerations
}

func (e *sqliteEngine) close() error {
	var errs []error
	for _, q := range e.prepared {
		errs = append(errs, q.Close())
	}
	return errors.Join(append(errs, e.checkpointer.Close())...)
}
