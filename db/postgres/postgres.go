// Package postgres is the store's engine for a PostgreSQL database, which several controllers on
// different machines may share. Importing it registers the engine as "postgres".
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/db/postgres/internal/pgsqlc"
	pgmigrations "github.com/meshhq/hq/migrations/postgres"
)

func init() {
	driver.Register("postgres", func(ctx context.Context, url string) (driver.Engine, error) { return Open(ctx, url) })
}

// engine runs the store on PostgreSQL.
type engine struct {
	config      *pgx.ConnConfig
	write, read *sql.DB
}

// Every write transaction first takes the schema's write lock (hq_lock_writes, an advisory
// lock; changes by hand take it through a trigger): writes from every controller take turns,
// as they do in one SQLite file, so a transaction that reads and then writes (If-Match,
// fencing, "a send is recorded only while its generation is current") sees every write
// committed before it, at READ COMMITTED, and none can come between its read and its write.
// Reads take no lock.

// generationsChannel is what the nodes_generation_notify trigger notifies with a node's name,
// in the schema the store's tables are in.
const generationsChannel = "hq_generations_"

// listenTimeout bounds connecting to listen, which long-polls wait for, and quiet is how long
// the listening connection may be silent before it is asked whether it still lives: one that
// died without a word would otherwise wait for notifications that never come.
const (
	listenTimeout = 5 * time.Second
	quiet         = 30 * time.Second
)

// Open opens and migrates the PostgreSQL database url names.
func Open(ctx context.Context, url string) (driver.Engine, error) {
	config, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("HQ_DB: %w", err)
	}
	e := &engine{config: config}
	// A generation handed to a host must survive a crash of the server, whatever the server's
	// default: commits wait for the WAL to be flushed, as SQLite's synchronous=FULL does.
	config.RuntimeParams["synchronous_commit"] = "on"
	e.write = stdlib.OpenDB(*config)
	// One connection writes for this process, so its writers queue in Go; the advisory lock
	// orders them against the other controllers'.
	e.write.SetMaxOpenConns(1)
	if err := e.write.PingContext(ctx); err != nil {
		e.write.Close()
		return nil, fmt.Errorf("open PostgreSQL: %w", err)
	}
	if err := migrate(ctx, e.write); err != nil {
		e.write.Close()
		return nil, err
	}
	e.read = stdlib.OpenDB(*config)
	// Every read connection is kept, as on SQLite.
	e.read.SetMaxOpenConns(8)
	e.read.SetMaxIdleConns(8)
	return e, nil
}

// migrate applies every pending migration, holding goose's session lock so that controllers
// starting together migrate once.
//
// The lock is the schema's own: goose's default is one lock for the whole database, so a
// controller of one schema would wait for another schema's migration, and goose tries again
// only every 5 s. Controllers of one schema still take turns; a turn is asked for every second.
func migrate(ctx context.Context, db *sql.DB) error {
	id, err := migrationLockID(ctx, db)
	if err != nil {
		return err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(id), lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return driver.Migrate(ctx, goose.DialectPostgres, db, pgmigrations.FS, goose.WithSessionLocker(locker))
}

// migrationLockKey is the high half of every schema's migration lock; the schema's name hashed
// is the low half.
const migrationLockKey = 0x68712d6d // "hq-m"

// migrationLockID is the advisory lock migrations of the schema db works in take.
func migrationLockID(ctx context.Context, db *sql.DB) (int64, error) {
	var h int32
	if err := db.QueryRowContext(ctx, "SELECT hashtext(coalesce(current_schema(), ''))").Scan(&h); err != nil {
		return 0, fmt.Errorf("migrations: the schema's lock: %w", err)
	}
	return migrationLockKey<<32 | int64(uint32(h)), nil
}

func (e *engine) Write() *sql.DB { return e.write }
func (e *engine) Read() *sql.DB  { return e.read }

func (e *engine) Queries(pool *sql.DB, tx *sql.Tx) driver.Queries {
	if tx != nil {
		return queries{pgsqlc.New(tx)}
	}
	return queries{pgsqlc.New(pool)}
}

func (e *engine) LockWrites(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "SELECT hq_lock_writes()")
	return err
}

// ReadOptions: REPEATABLE READ is one snapshot for the whole transaction, as SQLite's read
// transactions are.
func (e *engine) ReadOptions() *sql.TxOptions {
	return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
}

func (e *engine) DiskFull(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pe.Code == "53100" // disk_full
}

// Sizes: the write-ahead log is the server's, shared by every database on it, so none of it
// is counted as this one's.
func (e *engine) Sizes(ctx context.Context) (database, wal int64, err error) {
	err = e.read.QueryRowContext(ctx, "SELECT pg_database_size(current_database())").Scan(&database)
	return database, 0, err
}

// Checkpoints is nil: the server checkpoints its own log.
func (e *engine) Checkpoints(time.Duration, *slog.Logger) func(ctx context.Context, ready func()) {
	return nil
}

// Watch listens for the generations every controller's commits move: PostgreSQL tells each
// listener at commit, so no controller scans the nodes. A connection that cannot be made at
// once is retried; meanwhile long-polls still end at their deadline.
func (e *engine) Watch(log *slog.Logger, moved func(node string), lost func()) func(ctx context.Context, ready func()) {
	return func(ctx context.Context, ready func()) {
		conn, err := e.listen(ctx)
		if err != nil {
			log.Warn("cannot listen for other controllers' changes; retrying", "err", err)
		}
		ready()
		l := listener{e: e, log: log, moved: moved, lost: lost}
		l.loop(ctx, conn)
	}
}

// listener hears the notifications of one watch.
type listener struct {
	e     *engine
	log   *slog.Logger
	moved func(node string)
	lost  func()
}

func (e *engine) listen(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, listenTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, e.config)
	if err != nil {
		return nil, err
	}
	var schema string
	err = conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema)
	if err == nil {
		_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{generationsChannel + schema}.Sanitize())
	}
	if err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// alive asks a quiet listening connection whether it still lives.
func alive(ctx context.Context, conn *pgx.Conn) bool {
	ctx, cancel := context.WithTimeout(ctx, listenTimeout)
	defer cancel()
	return conn.Ping(ctx) == nil
}

// loop tells of every node notified until ctx ends. A lost connection may have lost
// notifications with it: once listening again, it says so (every waiter is woken to look).
func (l listener) loop(ctx context.Context, conn *pgx.Conn) {
	for ctx.Err() == nil {
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			var err error
			if conn, err = l.e.listen(ctx); err != nil {
				continue
			}
			l.lost()
		}
		wait, cancel := context.WithTimeout(ctx, quiet)
		n, err := conn.WaitForNotification(wait)
		cancel()
		if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && alive(ctx, conn) {
			continue // only quiet
		}
		if err != nil {
			conn.Close(context.Background())
			conn = nil
			if ctx.Err() == nil {
				l.log.Warn("lost the listening connection; listening again", "err", err)
			}
			continue
		}
		l.moved(n.Payload)
	}
	if conn != nil {
		conn.Close(context.Background())
	}
}

func (e *engine) Close() error { return errors.Join(e.read.Close(), e.write.Close()) }

// list is a list of names as this engine's queries take it: a JSON array, [] when empty
// (json_array_elements_text reads it).
func list(names []string) string { return driver.JSONList(names) }
