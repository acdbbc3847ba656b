package db

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// Retention says how long history is kept: rows of transitions, reports, sends and drifts older than
// For are pruned, except each node's newest KeepPerNode of each table, so a node that went
// quiet long ago still shows how it ended.
type Retention struct {
	For         time.Duration
	KeepPerNode int
	// Window is how many rows one pruning transaction looks at: small, so a pass never holds
	// the one writer for long and reports keep landing between windows.
	Window int
}

// DefaultRetention keeps 30 days and at least the newest 100 rows per node and table, looking
// at 500 rows per window.
var DefaultRetention = Retention{For: 720 * time.Hour, KeepPerNode: 100, Window: 500}

// historyTable is one history table as retention walks it.
type historyTable struct {
	name  string
	end   func(ctx context.Context, q driver.Queries, after, window int64) (id int64, at string, err error)
	prune func(ctx context.Context, q driver.Queries, after, until int64, cutoff string, keep int64) (int64, error)
}

var historyTables = []historyTable{
	{"drifts",
		func(ctx context.Context, q driver.Queries, after, window int64) (int64, string, error) {
			r, err := q.DriftPruneWindowEnd(ctx, driver.DriftPruneWindowEndParams{After: after, Batch: window})
			return r.ID, r.At, err
		},
		func(ctx context.Context, q driver.Queries, after, until int64, cutoff string, keep int64) (int64, error) {
			return q.DriftPrune(ctx, driver.DriftPruneParams{After: after, Until: until, Cutoff: cutoff, Keep: keep})
		}},
	{"transitions",
		func(ctx context.Context, q driver.Queries, after, window int64) (int64, string, error) {
			r, err := q.TransitionPruneWindowEnd(ctx, driver.TransitionPruneWindowEndParams{After: after, Batch: window})
			return r.ID, r.At, err
		},
		func(ctx context.Context, q driver.Queries, after, until int64, cutoff string, keep int64) (int64, error) {
			return q.TransitionPrune(ctx, driver.TransitionPruneParams{After: after, Until: until, Cutoff: cutoff, Keep: keep})
		}},
	{"reports",
		func(ctx context.Context, q driver.Queries, after, window int64) (int64, string, error) {
			r, err := q.ReportPruneWindowEnd(ctx, driver.ReportPruneWindowEndParams{After: after, Batch: window})
			return r.ID, r.At, err
		},
		func(ctx context.Context, q driver.Queries, after, until int64, cutoff string, keep int64) (int64, error) {
			return q.ReportPrune(ctx, driver.ReportPruneParams{After: after, Until: until, Cutoff: cutoff, Keep: keep})
		}},
	{"sends",
		func(ctx context.Context, q driver.Queries, after, window int64) (int64, string, error) {
			r, err := q.SendPruneWindowEnd(ctx, driver.SendPruneWindowEndParams{After: after, Batch: window})
			return r.ID, r.At, err
		},
		func(ctx context.Context, q driver.Queries, after, until int64, cutoff string, keep int64) (int64, error) {
			return q.SendPrune(ctx, driver.SendPruneParams{After: after, Until: until, Cutoff: sql.NullString{String: cutoff, Valid: true}, Keep: keep})
		}},
}

// Prune deletes the history that retention no longer keeps, one window of rows per
// transaction, oldest first, and returns how many rows it deleted per table. It stops at the
// first window whose newest row is younger than the cutoff: rows are written in time order,
// so everything after it is younger too.
func (s *Store) Prune(ctx context.Context, r Retention) (map[string]int64, error) {
	cutoff := hq.FormatTime(s.clock().Add(-r.For))
	deleted := map[string]int64{}
	for _, t := range historyTables {
		var after int64
		for {
			var until int64
			var done bool
			start := time.Now()
			err := s.inTx(ctx, func(q driver.Queries) error {
				id, at, err := t.end(ctx, q, after, int64(r.Window))
				if errors.Is(err, sql.ErrNoRows) {
					done = true
					return nil
				}
				if err != nil {
					return err
				}
				// OFFSET keep-1 in the query finds each node's keep-th newest row.
				n, err := t.prune(ctx, q, after, id, cutoff, int64(r.KeepPerNode-1))
				deleted[t.name] += n
				until, done = id, at >= cutoff
				return err
			})
			if err != nil {
				return deleted, err
			}
			if done {
				break
			}
			after = until
			// Leave the writer to reports for as long as the window held it: pruning takes
			// at most half of it, and a report waits for one window at most.
			select {
			case <-ctx.Done():
				return deleted, ctx.Err()
			case <-time.After(max(time.Since(start), time.Millisecond)):
			}
		}
	}
	return deleted, nil
}
