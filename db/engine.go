package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
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
	// watch is the watcher's run: it rings the bells of nodes whose generation another
	// controller moves, until its context ends, and is ready once a change committed after
	// that is sure to ring.
	watch(s *Store) func(ctx context.Context, ready func())
	// checkpoints is the checkpointer's run: whatever keeps the engine's log from growing
	// without bound.
	checkpoints(s *Store) func(ctx context.Context, ready func())
	close() error
}

// IsPostgres reports whether HQ_DB names a PostgreSQL database rather than a SQLite file.
func IsPostgres(hqDB string) bool {
	return strings.HasPrefix(hqDB, "postgres://") || strings.HasPrefix(hqDB, "postgresql://")
}

// CheckName refuses an HQ_DB that is neither a PostgreSQL URL nor a file's path: a URL of
// another scheme, or PostgreSQL's keyword form (host=… dbname=…), would otherwise open a SQLite
// file of that name.
func CheckName(hqDB string) error {
	switch {
	case IsPostgres(hqDB):
		return nil
	case hqDB == "":
		return errors.New("HQ_DB is empty: name a SQLite file or a postgres:// URL")
	case strings.Contains(hqDB, "://") || strings.HasPrefix(hqDB, "postgres:") || strings.Contains(hqDB, "dbname="):
		return fmt.Errorf("HQ_DB (%s) is neither a SQLite file nor a postgres:// URL", Redacted(hqDB))
	}
	return nil
}

// Redacted is HQ_DB as logs and messages may show it: a URL without its password (in the user
// part or as a parameter).
func Redacted(hqDB string) string {
	u, err := url.Parse(hqDB)
	if err != nil || u.Scheme == "" {
		if IsPostgres(hqDB) {
			return "the PostgreSQL database"
		}
		return hqDB
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
