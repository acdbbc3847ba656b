package db

import (
	"context"
	"database/sql"
	"strings"

	"github.com/meshhq/hq/db/internal/dbsqlc"
)

// engine is what SQLite and PostgreSQL do differently behind the store. Both are reached
// through database/sql and run queries of the same names and shapes (dbsqlc.Querier), so the
// store's logic is written once; an engine only opens, locks, listens and measures.
type engine interface {
	// queries returns the store's queries on a pool or in a transaction of it.
	queries(pool *sql.DB, tx *sql.Tx) dbsqlc.Querier
	// lockWrites is the first statement of every write transaction: what makes writes from
	// every controller on the database take turns.
	lockWrites(ctx context.Context, tx *sql.Tx) error
	// readOptions begins a read transaction that sees one snapshot.
	readOptions() *sql.TxOptions
	// diskFull reports whether err says the database has no room left.
	diskFull(err error) bool
	// sizes are the bytes the database and its write-ahead log take.
	sizes(ctx context.Context, read *sql.DB) (database, wal int64, err error)
	// startWatch starts ringing the bells of nodes whose generation another controller moves,
	// until the store closes. It returns once a change committed after it returned is sure to
	// ring: waiters read their generation after it.
	startWatch(s *Store)
	close() error
}

// IsPostgres reports whether HQ_DB names a PostgreSQL database rather than a SQLite file.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}
