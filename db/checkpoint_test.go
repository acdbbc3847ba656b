package db

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/wait"
)

// fillNodes writes n nodes in one commit, by SQL, about 650 bytes of pages each.
func fillNodes(t *testing.T, s *Store, from, n int) {
	t.Helper()
	if _, err := s.write.Exec(`WITH RECURSIVE i(n) AS (SELECT ?1 UNION ALL SELECT n + 1 FROM i WHERE n < ?1 + ?2 - 1)
		INSERT INTO nodes (name, token_hash, created_at) SELECT printf('fill-%06d', n), printf('%0250d', n), '2026-11-30T03:00:00.000Z' FROM i`,
		from, n); err != nil {
		t.Fatal(err)
	}
}

func mainFileSize(t *testing.T, s *Store) int64 {
	t.Helper()
	size, _, err := s.eng.Sizes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return size
}

// Under writes that never pause the log still starts over: it stays within a few megabytes
// however much is written. (A checkpointer alone cannot bring that about: the log starts over
// only after a checkpoint that ended with no write under way.)
func TestTheLogStartsOverUnderSteadyWrites(t *testing.T) {
	if testdb.Postgres() {
		t.Skip("checkpointing is SQLite's; PostgreSQL's server checkpoints its own log")
	}
	s, _ := setupWith(t, Options{CheckpointEvery: 5 * time.Millisecond})
	// The checkpointer alone beside the writer, as before workers were started together: the
	// other workers' reads, each a snapshot the log must keep, are not what this measures.
	start(t, s.Checkpointer())
	mustNode(t, s, "n0")
	for i := range 40 {
		fillNodes(t, s, i*1000, 1000) // about 40 MB in all, 650 KB a commit
	}
	_, wal, err := s.eng.Sizes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if db := mainFileSize(t, s); wal > 12<<20 || db < 20<<20 {
		t.Errorf("after 40 MB of commits the log is %d bytes and the database file %d", wal, db)
	}
}

// The checkpointer copies the log into the database file on its own, before the writer would
// (a log of fewer than 1,000 pages).
func TestTheCheckpointerCopiesTheLog(t *testing.T) {
	t.Parallel()
	if testdb.Postgres() {
		t.Skip("checkpointing is SQLite's; PostgreSQL's server checkpoints its own log")
	}
	s, _ := setupWith(t, Options{CheckpointEvery: 20 * time.Millisecond})
	start(t, s.Workers()...)
	mustNode(t, s, "n0")
	before := mainFileSize(t, s)
	fillNodes(t, s, 0, 1000) // about 650 KB
	wait.For(t, 10*time.Second, fmt.Sprintf("a checkpoint to grow the database file past %d bytes", before), func() bool {
		return mainFileSize(t, s) > before
	})
}
