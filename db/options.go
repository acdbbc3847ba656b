package db

import (
	"log/slog"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/seal"
)

// Options are the store's settings, all given at Open; a zero field takes its default.
type Options struct {
	// Now is the clock; tests give their own.
	Now func() time.Time
	// StuckAttempts and StuckAfter decide when failing becomes stuck.
	StuckAttempts int
	StuckAfter    time.Duration
	// SilentAfter is how long without a report before a node is silent.
	SilentAfter time.Duration
	// DriftThreshold is how many put-backs of one resource within hq.DriftWindow give its
	// node a drift line.
	DriftThreshold int
	// WatchEvery is how often the watcher looks for generations other processes moved (on
	// SQLite; PostgreSQL tells at commit).
	WatchEvery time.Duration
	// MoveEvery is how often the mover looks for work nobody told it of.
	MoveEvery time.Duration
	// RolloutEvery is how often the rollout worker looks without being told.
	RolloutEvery time.Duration
	// CheckpointEvery is how often the checkpointer copies SQLite's log into the file.
	CheckpointEvery time.Duration
	// LeaseFor is how long a worker's lease lasts unrenewed (leases.go): another controller
	// takes the work over within it when its holder dies.
	LeaseFor time.Duration
	// CommitWait is how long the committer, holding a lone request, waits for more to share
	// its commit when requests have been arriving less than that apart (batch.go). Zero,
	// unlike the other fields, means what it says: every batch is committed at once.
	CommitWait time.Duration
	// Log receives what the store's workers have to say.
	Log *slog.Logger
	// SecretsKey is the controller's key for secrets at rest (HQ_SECRETS_KEY_FILE), and during
	// a rekey the one before it: every version is encrypted to the current one, and opened
	// only to be sealed to a node's key or encrypted again.
	SecretsKey *seal.Keys
	// MaxDeclaration bounds a node's declaration, in bytes as encoded (hq.MaxDeclaration).
	MaxDeclaration int
}

// withDefaults is o with every zero field set to its default.
func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	set(&o.StuckAttempts, 5)
	set(&o.StuckAfter, 30*time.Minute)
	set(&o.SilentAfter, 3*time.Minute)
	set(&o.DriftThreshold, hq.DriftThreshold)
	set(&o.WatchEvery, time.Second)
	set(&o.MoveEvery, 5*time.Second)
	set(&o.RolloutEvery, time.Second)
	// A checkpoint a second kept SQLite's log small through a fleet-wide change.
	set(&o.CheckpointEvery, time.Second)
	set(&o.LeaseFor, 15*time.Second)
	set(&o.MaxDeclaration, hq.MaxDeclaration)
	return o
}

func set[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
