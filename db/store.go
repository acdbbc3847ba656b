package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/internal/dbsqlc"
)

// Store is the controller's state: one database, a SQLite file or PostgreSQL. Writes go through
// a single connection, so they queue in Go rather than spin on the database's lock; reads use a
// pool of their own.
type Store struct {
	// path is where the database is: a file, or a PostgreSQL URL without its password.
	path  string
	write *sql.DB
	read  *sql.DB
	// wq and rq are the queries on each pool.
	wq, rq dbsqlc.Querier
	eng    engine
	// Now is the clock; tests replace it.
	Now func() time.Time
	// StuckAttempts and StuckAfter decide when failing becomes stuck.
	StuckAttempts int
	StuckAfter    time.Duration
	// SilentAfter is how long without a report before a node is silent.
	SilentAfter time.Duration
	// DriftThreshold is how many put-backs of one resource within hq.DriftWindow give its
	// node a drift line.
	DriftThreshold int

	// WatchEvery is how often generations changed by other processes are looked for.
	WatchEvery time.Duration
	bells      bells
	revisions  revisions
	watchOnce  sync.Once
	// background waits for the store's own goroutines; closed tells them to stop, and ends
	// backgroundCtx, which their queries run in.
	background       sync.WaitGroup
	backgroundMu     sync.Mutex // orders starting a goroutine against Close
	backgroundCtx    context.Context
	cancelBackground context.CancelFunc
	closed           chan struct{}
	// The mover moves pins to new revisions in chunks; moveBell wakes it.
	moverOnce sync.Once
	moveBell  chan struct{}
	// MoveEvery is how often the mover looks for work nobody told it of.
	MoveEvery time.Duration
	// The rollout loop moves rollouts on in waves; rolloutBell wakes it, and RolloutEvery is
	// how often it looks without being told.
	rolloutOnce    sync.Once
	rolloutStarted atomic.Bool
	// rolloutsActive is whether the loop's last look found a rollout under way.
	rolloutsActive atomic.Bool
	rolloutBell    chan struct{}
	RolloutEvery   time.Duration
	// CheckpointEvery is how often the SQLite write-ahead log is copied into the database
	// file, away from the writer (checkpoint.go); it is read when the first write begins.
	CheckpointEvery time.Duration
	checkpointOnce  sync.Once
	// writeTurn holds a write transaction's turn (inTxWith).
	writeTurn chan struct{}
	// batches takes the reports that share a commit to the committer (batch.go).
	batchOnce sync.Once
	batches   chan *batchRequest
	// batched is the most reports one commit has held.
	batched atomic.Int64
	// Log receives what the store's own goroutines have to say.
	Log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
	// trouble is set while writes fail for a reason an operator must fix (a full disk), and
	// cleared by the next write that succeeds.
	trouble atomic.Pointer[WriteTrouble]
}

// Open opens (creating if needed) and migrates the database hqDB names: a PostgreSQL URL
// (postgres://…) or the path of a SQLite file.
func Open(ctx context.Context, hqDB string) (*Store, error) {
	if err := CheckName(hqDB); err != nil {
		return nil, err
	}
	var (
		s   *Store
		err error
	)
	if IsPostgres(hqDB) {
		s, err = openPostgres(ctx, hqDB)
	} else {
		s, err = openSQLite(ctx, hqDB)
	}
	if err != nil {
		return nil, err
	}
	if err := s.fillRevisionRows(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: rows of earlier revisions: %w", s.Where(), err)
	}
	return s, nil
}

// StartBackground starts the store's own work once its settings are made: the mover and the
// rollout loop run from then on, whether or not there is work yet, because work another
// controller on the database began is this one's to finish when that one dies, and a crash
// leaves work behind too. Idle, each is one cheap read a period. Without it they start with
// the first change that gives them work.
func (s *Store) StartBackground() {
	s.startMover()
	s.startRolloutLoop()
}

// Where says where the database is, as logs may show it: a file, or a URL without its password.
func (s *Store) Where() string { return s.path }

// newStore is a store on an engine's two pools, with the defaults of every setting.
func newStore(where string, eng engine, write, read *sql.DB) *Store {
	s := &Store{
		path: where, eng: eng, write: write, read: read, Now: time.Now,
		StuckAttempts: 5, StuckAfter: 30 * time.Minute, SilentAfter: 3 * time.Minute, DriftThreshold: hq.DriftThreshold,
		WatchEvery: time.Second, closed: make(chan struct{}), moveBell: make(chan struct{}, 1),
		MoveEvery: 5 * time.Second, Log: slog.New(slog.DiscardHandler),
		rolloutBell: make(chan struct{}, 1), RolloutEvery: time.Second, CheckpointEvery: checkpointEvery,
		writeTurn: make(chan struct{}, 1),
	}
	s.backgroundCtx, s.cancelBackground = context.WithCancel(context.Background())
	s.wq, s.rq = eng.queries(write, nil), eng.queries(read, nil)
	return s
}

// Close stops the store's background work, waits for it, and closes both pools. Calling it
// again returns the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.backgroundMu.Lock()
		close(s.closed)
		s.backgroundMu.Unlock()
		s.cancelBackground()
		s.background.Wait()
		var errs []error
		errs = append(errs, s.eng.close())
		s.closeErr = errors.Join(append(errs, s.read.Close(), s.write.Close())...)
	})
	return s.closeErr
}

// inTx runs fn in one write transaction, committed when fn returns nil. A write the disk has
// no room for is an unavailable error, and the store says so until a write succeeds again.
func (s *Store) inTx(ctx context.Context, fn func(q dbsqlc.Querier) error) error {
	return s.inTxWith(ctx, func(q dbsqlc.Querier, _ *sql.Tx) error { return fn(q) })
}

// inTxWith is inTx for a caller that needs the transaction itself (for savepoints).
func (s *Store) inTxWith(ctx context.Context, fn func(q dbsqlc.Querier, tx *sql.Tx) error) error {
	s.checkpointOnce.Do(func() { s.eng.startCheckpoints(s) })
	// One writer at a time from begin to end, not only while it holds the connection: Commit
	// hands the pool's one connection to the next writer before this one has told the cache
	// whether it committed, and the next one's begin would reset what this one's end reads.
	select {
	case s.writeTurn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	defer func() { <-s.writeTurn }()
	err := s.tx(ctx, func(q dbsqlc.Querier, tx *sql.Tx) error {
		// Inside the one writer's transaction: the cache may forget what it learns here.
		s.revisions.begin()
		err := fn(q, tx)
		if err != nil {
			s.revisions.end(false)
		}
		return err
	})
	if err == nil {
		s.revisions.end(true)
	} else {
		s.revisions.end(false)
	}
	if err != nil && s.eng.diskFull(err) {
		s.trouble.CompareAndSwap(nil, &WriteTrouble{Since: s.Now(), Cause: "the database's disk is full"})
		return hq.Errorf(hq.CodeUnavailable, "the database's disk is full: nothing was written; free space where %s lives and try again", s.path)
	}
	if err == nil && s.trouble.Load() != nil {
		s.trouble.Store(nil)
	}
	return err
}

func (s *Store) tx(ctx context.Context, fn func(q dbsqlc.Querier, tx *sql.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := s.eng.lockWrites(ctx, tx); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	dry := ctx.Value(dryRunKey{}) != nil
	if dry {
		// What the rolled-back transaction decoded may name revisions that will never exist;
		// forgotten before the rollback lets another writer make them for real.
		defer s.revisions.clear()
	}
	if err := fn(s.eng.queries(s.write, tx), tx); err != nil {
		return err
	}
	if dry {
		return errDryRun
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// WriteTrouble is why the store cannot write, and since when.
type WriteTrouble struct {
	Since time.Time
	Cause string
}

// Line is the status line that says so.
func (t WriteTrouble) Line() string {
	return fmt.Sprintf("controller: cannot write since %s: %s; reports and changes are refused with 503 until it can", hq.FormatTime(t.Since), t.Cause)
}

// Trouble returns why writes fail now, if they do.
func (s *Store) Trouble() (WriteTrouble, bool) {
	if t := s.trouble.Load(); t != nil {
		return *t, true
	}
	return WriteTrouble{}, false
}

// inReadTx runs fn in one read transaction: a single snapshot of the database.
func (s *Store) inReadTx(ctx context.Context, fn func(q dbsqlc.Querier) error) error {
	tx, err := s.read.BeginTx(ctx, s.eng.readOptions())
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(s.eng.queries(s.read, tx))
}

// reader returns queries on the read pool, for single statements.
func (s *Store) reader() dbsqlc.Querier { return s.rq }

// notFound turns sql.ErrNoRows into a not_found *hq.Error naming what was missing.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return hq.Errorf(hq.CodeNotFound, format, args...)
	}
	return err
}

func (s *Store) now() string { return hq.FormatTime(s.Now()) }

func nullTime(ns sql.NullString) *time.Time {
	if !ns.Valid {
		return nil
	}
	t := hq.ParseTime(ns.String)
	return &t
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// goBackground runs fn as one of the store's own goroutines, unless the store is closing:
// Close waits for every goroutine started before it, and none starts after.
func (s *Store) goBackground(fn func()) bool {
	s.backgroundMu.Lock()
	defer s.backgroundMu.Unlock()
	select {
	case <-s.closed:
		return false
	default:
	}
	s.background.Go(fn)
	return true
}
