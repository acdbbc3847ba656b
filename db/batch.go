package db

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// Reports arrive one per request, each a short write transaction, and at a fleet's rate the one
// writer spends more on beginning and committing them (a commit waits for the disk) than on
// their statements. So the reports that arrive while another commits wait for the next commit
// together: one transaction, a savepoint for each report, one commit. A report refused for what
// it says rolls back to its savepoint and changes nothing; any other error ends the batch, and
// its reports are then each written again alone, as if there had been no batch. The other
// writes a fleet makes many of at once share the batches too: the sends of the declarations
// its hosts fetch, and the assignments of an operator assigning it node by node.

// With CommitWait set, a committer whose requests have been arriving less than CommitWait apart
// and that holds a lone request waits up to CommitWait for more before it commits: at a fleet's
// steady rate a report rarely finds another waiting, and each would pay a commit of its own (a
// sync of the log on SQLite, a round trip and a sync on PostgreSQL, where reports taken
// together also share one statement).

// maxBatch bounds the reports of one commit, so that one batch never holds the writer for
// long.
const maxBatch = 32

// committer is a running committer: the requests it takes, and gone, closed once it takes no
// more.
type committer struct {
	requests chan *batchRequest
	gone     chan struct{}
}

type batchRequest struct {
	ctx context.Context
	// quick, when set, runs before fn and outside the request's savepoint, which costs a round
	// trip on a server: it writes nothing unless it returns true, and then fn does not run.
	// On an engine that takes it in one statement (driver.SteadyReports), a request committed
	// alone runs it outside any transaction (inStatement); on one that takes it in several
	// (driver.SteadyContext), in fn's. Any error it returns is a failure of the database, not
	// a refusal.
	quick func(ctx context.Context, q driver.Queries) (bool, error)
	// steady or settled, when set, is the report quick takes, which a batch may take together
	// with others of its kind in one statement (takeTogether); took is then told what the
	// statement answered for it.
	steady  *driver.ReportSteadyParams
	settled *driver.ReportSettledParams
	took    func(driver.ReportSteadyRow)
	// node is the node whose report this is, for a report.
	node string
	fn   func(ctx context.Context, q driver.Queries) error
	done chan error
}

// inBatchTx runs fn in a write transaction it may share with other calls of inBatchTx, each
// in a savepoint of its own. fn may run more than once (alone, after a batch failed), so it
// must start from nothing each time. Its statements run on the ctx it is given, which keeps
// ctx's values but does not end with it: once the committer has taken a request it runs to
// its end, and one request's cancellation does not undo a batch. A statement on a context
// that can end also costs a goroutine of the driver's and one of database/sql's for each
// statement, a cost the hottest path need not pay.
//
// Without a committer running, each request commits alone.
func (s *Store) inBatchTx(ctx context.Context, fn func(ctx context.Context, q driver.Queries) error) error {
	return s.inBatchTxQuick(ctx, nil, fn)
}

// inBatchTxQuick is inBatchTx with a quick way first, when quick is not nil
// (batchRequest.quick).
func (s *Store) inBatchTxQuick(ctx context.Context, quick func(ctx context.Context, q driver.Queries) (bool, error), fn func(ctx context.Context, q driver.Queries) error) error {
	return s.submit(&batchRequest{ctx: ctx, quick: quick, fn: fn})
}

// submit hands r to the committer, or commits it alone without one, and waits for its end.
func (s *Store) submit(r *batchRequest) error {
	ctx := r.ctx
	r.done = make(chan error, 1)
	c := s.committer.Load()
	if c == nil {
		return s.commitAlone(r)
	}
	select {
	case c.requests <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.gone:
		return s.commitAlone(r)
	}
	return <-r.done
}

// commitBatches is the committer's run: it takes a request, and with it every request already
// waiting, and commits them together, until ctx ends. A batch it has taken it commits to the
// end.
func (s *Store) commitBatches(ctx context.Context, ready func()) {
	c := &committer{requests: make(chan *batchRequest), gone: make(chan struct{})}
	if !s.committer.CompareAndSwap(nil, c) {
		panic("db: two committers on one store")
	}
	defer func() {
		s.committer.Store(nil)
		close(c.gone)
	}()
	ready()
	var arrivals arrivals
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for {
		var batch []*batchRequest
		select {
		case <-ctx.Done():
			return
		case r := <-c.requests:
			arrivals.saw(time.Now())
			batch = append(batch, r)
		}
	more:
		for len(batch) < maxBatch {
			select {
			case r := <-c.requests:
				arrivals.saw(time.Now())
				batch = append(batch, r)
			default:
				break more
			}
		}
		// Only a request that would be committed alone waits: when others were waiting, the
		// writer is busy, and a wait would only leave it idle.
		if wait := s.opt.CommitWait; wait > 0 && len(batch) == 1 && arrivals.within(wait) {
			batch = c.gather(batch, linger, wait, &arrivals)
		}
		s.commitBatch(ctx, batch)
	}
}

// gather waits up to wait for more requests to join batch, on the committer's timer linger,
// stopped, and leaves it stopped. (Since Go 1.23 a stopped or reset timer delivers nothing
// stale.)
func (c *committer) gather(batch []*batchRequest, linger *time.Timer, wait time.Duration, a *arrivals) []*batchRequest {
	linger.Reset(wait)
	for len(batch) < maxBatch {
		select {
		case r := <-c.requests:
			a.saw(time.Now())
			batch = append(batch, r)
		case <-linger.C:
			return batch
		}
	}
	linger.Stop()
	return batch
}

// arrivals follows the gap between requests, as a moving average, so the committer waits for
// company only when more requests are due within its wait: a lone request, in a quiet hour, is
// committed at once.
type arrivals struct {
	last time.Time
	gap  time.Duration
}

// maxGap is the longest gap the average counts, and where it starts: from a quiet hour, a
// burst brings it under a few milliseconds within fifty requests.
const maxGap = time.Second

func (a *arrivals) saw(now time.Time) {
	if a.last.IsZero() {
		a.gap = maxGap
	} else {
		// An eighth of each new gap: a burst moves it within a few requests, one late request
		// does not undo a busy second.
		a.gap += (min(now.Sub(a.last), maxGap) - a.gap) / 8
	}
	a.last = now
}

// within says whether requests have been arriving less than wait apart.
func (a *arrivals) within(wait time.Duration) bool { return !a.last.IsZero() && a.gap < wait }

func (s *Store) commitBatch(ctx context.Context, batch []*batchRequest) {
	batch = s.takeTogether(ctx, batch)
	if len(batch) == 0 {
		return
	}
	if len(batch) == 1 {
		batch[0].done <- s.commitAlone(batch[0])
		return
	}
	errs := make([]error, len(batch))
	rolledBack := false
	ctx = context.WithoutCancel(ctx)
	err := s.inTxWith(ctx, func(q driver.Queries, tx *sql.Tx) error {
		for i, r := range batch {
			if errs[i] = r.ctx.Err(); errs[i] != nil {
				continue
			}
			if r.quick != nil {
				done, err := r.quick(context.WithoutCancel(r.ctx), q)
				if err != nil {
					return err
				}
				if done {
					continue
				}
			}
			if _, err := tx.ExecContext(ctx, "SAVEPOINT report"); err != nil {
				return err
			}
			errs[i] = r.fn(context.WithoutCancel(r.ctx), q)
			if errs[i] != nil && !refusal(errs[i]) {
				return errs[i]
			}
			if errs[i] != nil {
				rolledBack = true
				if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT report"); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT report"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for _, r := range batch {
			r.done <- s.commitAlone(r)
		}
		return
	}
	for n := int64(len(batch)); ; {
		if seen := s.batched.Load(); n <= seen || s.batched.CompareAndSwap(seen, n) {
			break
		}
	}
	if rolledBack {
		// What a rolled-back report decoded is not known to be committed.
		s.revisions.clear()
	}
	for i, r := range batch {
		r.done <- errs[i]
	}
}

// takeTogether takes the reports of a batch that an engine takes in one statement (steady
// ones, and settled ones) in one statement of each kind, which is a transaction of its own:
// a round trip for all of them, where each would cost one alone, or one in a transaction that
// costs three more. A report is among them only when no earlier report of the batch is its
// node's, so that a node's reports are still taken in the order they came. It answers the
// requests it took and returns the others, in their order, for the batch to write; when a
// statement fails, the batch writes its reports as it would have.
func (s *Store) takeTogether(ctx context.Context, batch []*batchRequest) []*batchRequest {
	if _, ok := s.wq.(driver.SteadyReports); !ok || len(batch) < 2 {
		return batch
	}
	var steady, settled []*batchRequest
	seen := map[string]bool{}
	for _, r := range batch {
		if r.node == "" {
			continue
		}
		if !seen[r.node] && r.ctx.Err() == nil && r.ctx.Value(dryRunKey{}) == nil {
			switch {
			case r.steady != nil:
				steady = append(steady, r)
			case r.settled != nil:
				settled = append(settled, r)
			}
		}
		seen[r.node] = true
	}
	if len(steady)+len(settled) < 2 {
		return batch
	}
	taken := map[*batchRequest]bool{}
	s.takeEach(ctx, steady, taken, func(ctx context.Context, q driver.SteadyReports) ([]driver.ReportSteadyRow, error) {
		args := make([]driver.ReportSteadyParams, len(steady))
		for i, r := range steady {
			args[i] = *r.steady
		}
		return q.ReportsSteady(ctx, args)
	})
	s.takeEach(ctx, settled, taken, func(ctx context.Context, q driver.SteadyReports) ([]driver.ReportSteadyRow, error) {
		args := make([]driver.ReportSettledParams, len(settled))
		for i, r := range settled {
			args[i] = *r.settled
		}
		return q.ReportsSettled(ctx, args)
	})
	if len(taken) == 0 {
		return batch
	}
	rest := batch[:0:0]
	for _, r := range batch {
		if !taken[r] {
			rest = append(rest, r)
		}
	}
	s.togetherTaken.Add(int64(len(taken)))
	return rest
}

// takeEach runs the one statement that takes reqs, alone in the writer's turn, and answers
// the requests it took, noting them in taken.
func (s *Store) takeEach(ctx context.Context, reqs []*batchRequest, taken map[*batchRequest]bool, run func(context.Context, driver.SteadyReports) ([]driver.ReportSteadyRow, error)) {
	if len(reqs) == 0 {
		return
	}
	var rows []driver.ReportSteadyRow
	_, err := s.inStatement(context.WithoutCancel(ctx), func(ctx context.Context, q driver.Queries) (bool, error) {
		var err error
		rows, err = run(ctx, q.(driver.SteadyReports))
		return true, err
	})
	if err != nil {
		return
	}
	for i, r := range reqs {
		if rows[i].Taken {
			r.took(rows[i])
			r.done <- nil
			taken[r] = true
		} else {
			// Not one the database takes this way just now: asked again alone, it would say so
			// again.
			r.quick = nil
		}
	}
}

// commitAlone writes one request in a transaction of its own.
func (s *Store) commitAlone(r *batchRequest) error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	ctx := context.WithoutCancel(r.ctx)
	if r.quick != nil && ctx.Value(dryRunKey{}) == nil {
		if _, oneStatement := s.wq.(driver.SteadyReports); !oneStatement {
			// The quick way is several statements here: it shares a transaction with fn.
			return s.inTx(ctx, func(q driver.Queries) error {
				if done, err := r.quick(ctx, q); err != nil || done {
					return err
				}
				return r.fn(ctx, q)
			})
		}
		// Alone, the quick way needs no transaction: its one statement is one.
		if done, err := s.inStatement(ctx, r.quick); err != nil || done {
			return err
		}
	}
	return s.inTx(ctx, func(q driver.Queries) error { return r.fn(ctx, q) })
}

// refusal reports whether err refuses a request for what it asks (a coded error the caller
// answers), after which its transaction may go on, rather than a failure of the database.
func refusal(err error) bool {
	var e *hq.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code != hq.CodeInternal && e.Code != hq.CodeUnavailable
}
