package db

import (
	"context"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/internal/workers"
)

// Several controllers may share one database, and some background work is for one of them at a
// time: two movers would only take turns moving the same pins, two rollout workers stepping the
// same rollout each other's waves. Each such worker runs only while its controller holds the
// worker's lease, a row of worker_leases. The holder renews it every third of opt.LeaseFor;
// another controller takes it once it has expired, so the work goes on within LeaseFor of its
// holder dying.
//
// A lease is an economy, not a guard: every write still takes the database's one write lock, and
// what these workers write is worked out from the rows in the same transaction, so a holder that
// lost its lease without knowing yet (a pause longer than the lease) does the same work twice at
// worst. Expiry compares the controllers' clocks: they should agree to well within LeaseFor.

// Leased is w run only while holder (this controller) holds w's lease.
func (s *Store) Leased(w workers.Worker, holder string) Worker {
	return Worker{name: w.Name(), run: func(ctx context.Context, ready func()) {
		ready()
		s.holdLease(ctx, w, holder)
	}}
}

// holdLease takes w's lease when it can and runs w while it holds it, until ctx ends; then it
// stops w, waits for it, and gives the lease up.
func (s *Store) holdLease(ctx context.Context, w workers.Worker, holder string) {
	tick := time.NewTicker(s.opt.LeaseFor / 3)
	defer tick.Stop()
	var running *leasedRun
	defer func() {
		if running != nil {
			running.stop()
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := s.releaseLease(ctx, w.Name(), holder); err != nil {
				s.log.Warn("giving up a lease", "worker", w.Name(), "err", err)
			}
		}
	}()
	var validUntil time.Time
	for {
		now := s.clock()
		held, err := s.takeLease(ctx, w.Name(), holder, now)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("renewing a lease", "worker", w.Name(), "err", err)
			// Unknown: keep working while the lease last written still runs.
			held = running != nil && now.Before(validUntil)
		case err == nil && held:
			validUntil = now.Add(s.opt.LeaseFor)
		}
		switch {
		case held && running == nil:
			s.log.Info("took a lease", "worker", w.Name(), "holder", holder)
			running = startLeased(ctx, w)
		case !held && running != nil:
			s.log.Warn("lost a lease", "worker", w.Name(), "holder", holder)
			running.stop()
			running = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// leasedRun is a worker running under a lease.
type leasedRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startLeased(ctx context.Context, w workers.Worker) *leasedRun {
	ctx, cancel := context.WithCancel(ctx)
	r := &leasedRun{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		w.Run(ctx, func() {})
	}()
	return r
}

func (r *leasedRun) stop() {
	r.cancel()
	<-r.done
}

// takeLease takes or renews the lease of worker for holder, and reports whether holder has it.
func (s *Store) takeLease(ctx context.Context, worker, holder string, now time.Time) (bool, error) {
	var n int64
	err := s.inTx(ctx, func(q driver.Queries) error {
		var err error
		n, err = q.LeaseTake(ctx, driver.LeaseTakeParams{Worker: worker, Holder: holder, Now: hq.FormatTime(now),
			ExpiresAt: hq.FormatTime(now.Add(s.opt.LeaseFor))})
		return err
	})
	return n == 1, err
}

func (s *Store) releaseLease(ctx context.Context, worker, holder string) error {
	return s.inTx(ctx, func(q driver.Queries) error {
		return q.LeaseRelease(ctx, driver.LeaseReleaseParams{Worker: worker, Holder: holder})
	})
}

// Lease is who holds a worker's lease, and until when.
type Lease struct {
	Worker, Holder     string
	TakenAt, ExpiresAt time.Time
}

// Leases lists the workers' leases.
func (s *Store) Leases(ctx context.Context) ([]Lease, error) {
	rows, err := s.reader().LeaseList(ctx)
	out := make([]Lease, len(rows))
	for i, r := range rows {
		out[i] = Lease{Worker: r.Worker, Holder: r.Holder, TakenAt: hq.ParseTime(r.TakenAt), ExpiresAt: hq.ParseTime(r.ExpiresAt)}
	}
	return out, err
}
