package loadgen

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// WALPosition is how many bytes of write-ahead log the PostgreSQL server at url has written in
// all: two readings apart are the log a stretch of work wrote. An empty url is an error.
func WALPosition(ctx context.Context, url string) (int64, error) {
	if url == "" {
		return 0, errors.New("no PostgreSQL database")
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var pos int64
	err = conn.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").Scan(&pos)
	return pos, err
}
