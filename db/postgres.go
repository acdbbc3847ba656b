package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/meshhq/hq/db/internal/dbsqlc"
	"github.com/meshhq/hq/db/internal/pgsqlc"
	pgmigrations "github.com/meshhq/hq/migrations/postgres"
)

// postgresEngine runs the store on PostgreSQL, which several controllers on different machines
// may share.
type postgresEngine struct {
	config *pgx.ConnConfig
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

func openPostgres(ctx context.Context, hqDB string, opt Options) (*Store, error) {
	config, err := pgx.ParseConfig(hqDB)
	if err != nil {
		return nil, fmt.Errorf("HQ_DB: %w", err)
	}
	where := Redacted(hqDB)
	// A generation handed to a host must survive a crash of the server, whatever the server's
	// default: commits wait for the WAL to be flushed, as SQLite's synchronous=FULL does.
	config.RuntimeParams["synchronous_commit"] = "on"
	write := stdlib.OpenDB(*config)
	// One connection writes for this process, so its writers queue in Go; the advisory lock
	// orders them against the other controllers'.
	write.SetMaxOpenConns(1)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("open %s: %w", where, err)
	}
	if err := migratePostgres(ctx, write); err != nil {
		write.Close()
		return nil, err
	}
	read := stdlib.OpenDB(*config)
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8) // see openSQLite
	return newStore(where, &postgresEngine{config: config}, write, read, opt), nil
}

// migratePostgres applies every pending migration, holding goose's session lock so that
// controllers starting together migrate once.
func migratePostgres(ctx context.Context, db *sql.DB) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return migrate(ctx, goose.DialectPostgres, db, pgmigrations.FS, goose.WithSessionLocker(locker))
}

func (e *postgresEngine) queries(pool *sql.DB, tx *sql.Tx) dbsqlc.Querier {
	if tx != nil {
		return pgsqlc.Adapt(pgsqlc.New(tx))
	}
	return pgsqlc.Adapt(pgsqlc.New(pool))
}

func (e *postgresEngine) lockWrites(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "SELECT hq_lock_writes()")
	return err
}

// readOptions: REPEATABLE READ is one snapshot for the whole transaction, as SQLite's read
// transactions are.
func (e *postgresEngine) readOptions() *sql.TxOptions {
	return &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
}

func (e *postgresEngine) diskFull(err error) bool {
	pe, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pe.Code == "53100" // disk_full
}

// sizes: the write-ahead log is the server's, shared by every database on it, so none of it
// is counted as this one's.
func (e *postgresEngine) sizes(ctx context.Context, read *sql.DB) (database, wal int64, err error) {
	err = read.QueryRowContext(ctx, "SELECT pg_database_size(current_database())").Scan(&database)
	return database, 0, err
}

// checkpoints has nothing to do: the server checkpoints its own log.
func (e *postgresEngine) checkpoints(*Store) func(ctx context.Context, ready func()) { return idle }

// watch listens for the generations every controller's commits move: PostgreSQL tells each
// listener at commit, so no controller scans the nodes. A connection that cannot be made at
// once is retried; meanwhile long-polls still end at their deadline.
func (e *postgresEngine) watch(s *Store) func(ctx context.Context, ready func()) {
	return func(ctx context.Context, ready func()) {
		conn, err := e.listen(ctx)
		if err != nil {
			s.log.Warn("cannot listen for other controllers' changes; retrying", "err", err)
		}
		ready()
		e.listenLoop(ctx, s, conn)
	}
}

func (e *postgresEngine) listen(ctx context.Context) (*pgx.Conn, error) {
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

// listenLoop rings the bell of every node notified until ctx ends. A lost connection may have
// lost notifications with it: once listening again, every waiter is woken to look.
func (e *postgresEngine) listenLoop(ctx context.Context, s *Store, conn *pgx.Conn) {
	for ctx.Err() == nil {
		if conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			var err error
			if conn, err = e.listen(ctx); err != nil {
				continue
			}
			s.bells.ringAll()
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
				s.log.Warn("lost the listening connection; listening again", "err", err)
			}
			continue
		}
		s.bells.ring(n.Payload)
	}
	if conn != nil {
		conn.Close(context.Background())
	}
}

func (e *postgresEngine) close() error { return nil }
