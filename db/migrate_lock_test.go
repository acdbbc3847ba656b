package db

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3/lock"

	"github.com/meshhq/hq/internal/testdb"
)

// Controllers of different schemas on one server do not wait for each other's migrations: a
// lock held where goose's default would take it (one for the whole database) does not hold up
// a store opening on a schema of its own, and two stores of one schema opening together
// migrate it once between them.
func TestMigrationsOfOtherSchemasDoNotWait(t *testing.T) {
	testdb.NeedServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testdb.Server())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lock.DefaultLockID); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", lock.DefaultLockID)

	url := testdb.NewOn(t, "postgres")
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := Open(ctx, url, Options{})
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("open while another migration's lock is held: %v", err)
		}
	}
}
