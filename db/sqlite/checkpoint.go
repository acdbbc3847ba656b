package sqlite

import (
	"context"
	"log/slog"
	"time"
)

// SQLite appends every commit to the write-ahead log, and a checkpoint copies the log back into
// the database file and syncs it. SQLite checkpoints in the commit that takes the log past
// 1,000 pages, inside the one writer's transaction: on a database of a fleet's size that copy
// is scattered writes and the sync of a large file, and every report queued behind the commit
// waits for it.
//
// So a loop beside the writer copies the log on a connection of its own, PASSIVE: what no
// reader still needs, while writers go on appending. The writer still checkpoints past 1,000
// pages, because only a checkpoint that finishes with no write under way lets the log start
// over; but by then most of the log is in the file already, and its checkpoint copies and syncs
// only what came since.

// Checkpoints copies the log into the database file every period, on a connection of its own.
func (e *engine) Checkpoints(every time.Duration, log *slog.Logger) func(ctx context.Context, ready func()) {
	return func(ctx context.Context, ready func()) {
		ready()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := e.checkpointer.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)"); err != nil && ctx.Err() == nil {
				log.Warn("checkpointing the database's log", "err", err)
			}
		}
	}
}
