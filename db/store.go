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
	"github.com/meshhq/hq/db/driver"
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
	wq, rq driver.Queries
	eng    driver.Engine
	opt    Options
	// clock is opt.Now.
	clock     func() time.Time
	bells     bells
	revisions revisions
	composed  composed
	// moveBell wakes the mover (moves.go).
	moveBell chan struct{}
	// rolloutBell wakes the rollout worker; rolloutsActive is whether its last look found a
	// rollout under way.
	rolloutBell    chan struct{}
	rolloutsActive atomic.Bool
	// writeTurn holds a write transaction's turn (inTxWith).
	writeTurn chan struct{}
	// committer is the running committer, if one runs (batch.go).
	committer atomic.Pointer[committer]
	// batched is the most reports one commit has held.
	batched atomic.Int64
	// steadyTaken counts the reports the engine took in one statement (driver.SteadyReports).
	steadyTaken atomic.Int64
	// togetherTaken counts those of them a batch took together (takeTogether).
	togetherTaken atomic.Int64
	// steadyHere counts the steady reports taken by takeSteady (driver.SteadyContext);
	// generalOnly, set by tests, sends every report the general way instead.
	steadyHere  atomic.Int64
	generalOnly bool
	// log receives what the store's workers have to say, opt.Log.
	log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
	// trouble is set while writes fail for a reason an operator must fix (a full disk), and
	// cleared by the next write that succeeds.
	trouble atomic.Pointer[WriteTrouble]
}

// Open opens (creating if needed) and migrates the database hqDB names: a PostgreSQL URL
// (postgres://…) or the path of a SQLite file.
// The store starts no work of its own: its background work is Workers, which its owner runs.
func Open(ctx context.Context, hqDB string, opt Options) (*Store, error) {
	if err := CheckName(hqDB); err != nil {
		return nil, err
	}
	engine := "sqlite"
	if IsPostgres(hqDB) {
		engine = "postgres"
	}
	eng, err := driver.Open(ctx, engine, hqDB)
	if err != nil {
		return nil, err
	}
	s := newStore(Redacted(hqDB), eng, opt)
	if err := s.fillRevisionRows(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: rows of earlier revisions: %w", s.Where(), err)
	}
	return s, nil
}

// Where says where the database is, as logs may show it: a file, or a URL without its password.
func (s *Store) Where() string { return s.path }

// newStore is a store on an open engine.
func newStore(where string, eng driver.Engine, opt Options) *Store {
	opt = opt.withDefaults()
	s := &Store{
		path: where, eng: eng, write: eng.Write(), read: eng.Read(), opt: opt, clock: opt.Now, log: opt.Log,
		moveBell: make(chan struct{}, 1), rolloutBell: make(chan struct{}, 1), writeTurn: make(chan struct{}, 1),
	}
	s.wq, s.rq = eng.Queries(s.write, nil), eng.Queries(s.read, nil)
	return s
}

// Close closes both pools; the store's workers must have stopped first. Calling it again
// returns the first call's result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.eng.Close()
	})
	return s.closeErr
}

// inTx runs fn in one write transaction, committed when fn returns nil. A write the disk has
// no room for is an unavailable error, and the store says so until a write succeeds again.
func (s *Store) inTx(ctx context.Context, fn func(q driver.Queries) error) error {
	return s.inTxWith(ctx, func(q driver.Queries, _ *sql.Tx) error { return fn(q) })
}

// inTxWith is inTx for a caller that needs the transaction itself (for savepoints).
func (s *Store) inTxWith(ctx context.Context, fn func(q driver.Queries, tx *sql.Tx) error) error {
	// One writer at a time from begin to end, not only while it holds the connection: Commit
	// hands the pool's one connection to the next writer before this one has told the cache
	// whether it committed, and the next one's begin would reset what this one's end reads.
	select {
	case s.writeTurn <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	defer func() { <-s.writeTurn }()
	err := s.tx(ctx, func(q driver.Queries, tx *sql.Tx) error {
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
	return s.wrote(err)
}

// ReportsInOneStatement is how many reports the engine has taken in one statement since the
// store opened (driver.SteadyReports); always 0 on SQLite.
func (s *Store) ReportsInOneStatement() int64 { return s.steadyTaken.Load() }

// ReportsSteadyInOneRead is how many reports, repeats of their node's last, the store has taken
// with one read and two writes since it opened (driver.SteadyContext); always 0 on PostgreSQL,
// which takes them in one statement instead.
func (s *Store) ReportsSteadyInOneRead() int64 { return s.steadyHere.Load() }

// inStatement runs fn on the write connection outside any transaction, in the writer's turn:
// fn's writes must be one statement, which is its own transaction, committed when it ends. On
// a server that saves the round trips of a begin and a commit. Like batchRequest.quick, fn
// says whether it wrote, and writes nothing when it says no.
func (s *Store) inStatement(ctx context.Context, fn func(ctx context.Context, q driver.Queries) (bool, error)) (bool, error) {
	select {
	case s.writeTurn <- struct{}{}:
	case <-ctx.Done():
		return false, fmt.Errorf("begin: %w", ctx.Err())
	}
	defer func() { <-s.writeTurn }()
	done, err := fn(ctx, s.wq)
	if err != nil || done {
		return done, s.wrote(err)
	}
	return false, nil
}

// wrote is err of a write, the disk's being full said as such; a write that succeeds ends
// the store's trouble.
func (s *Store) wrote(err error) error {
	if err != nil && s.eng.DiskFull(err) {
		s.trouble.CompareAndSwap(nil, &WriteTrouble{Since: s.clock(), Cause: "the database's disk is full"})
		return hq.Errorf(hq.CodeUnavailable, "the database's disk is full: nothing was written; free space where %s lives and try again", s.path)
	}
	if err == nil && s.trouble.Load() != nil {
		s.trouble.Store(nil)
	}
	return err
}

func (s *Store) tx(ctx context.Context, fn func(q driver.Queries, tx *sql.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := s.eng.LockWrites(ctx, tx); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	dry := ctx.Value(dryRunKey{}) != nil
	if dry {
		// What the rolled-back transaction decoded may name revisions that will never exist;
		// forgotten before the rollback lets another writer make them for real.
		defer s.revisions.clear()
	}
	if err := fn(s.eng.Queries(s.write, tx), tx); err != nil {
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
func (s *Store) inReadTx(ctx context.Context, fn func(q driver.Queries) error) error {
	tx, err := s.read.BeginTx(ctx, s.eng.ReadOptions())
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(s.eng.Queries(s.read, tx))
}

// reader returns queries on the read pool, for single statements.
func (s *Store) reader() driver.Queries { return s.rq }

// notFound turns sql.ErrNoRows into a not_found *hq.Error naming what was missing.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, sql.ErrNoRows) {
		return hq.Errorf(hq.CodeNotFound, format, args...)
	}
	return err
}

func (s *Store) now() string { return hq.FormatTime(s.clock()) }

func nullTime(ns sql.NullString) *time.Time {
	if !ns.Valid {
		return nil
	}
	t := hq.ParseTime(ns.String)
	return &t
}
