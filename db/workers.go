package db

import (
	"context"

	"github.com/meshhq/hq/internal/workers"
)

// Worker is one piece of the store's background work. The store starts none of them: their
// owner (controller.Run) runs them beside the requests and stops them before it closes the
// store. Without a worker the store still answers, with less: without the committer each
// report commits alone; without the watcher a long-poll learns of another process's change only
// at its deadline; without the checkpointer SQLite checkpoints inside commits; without the
// mover pins stay where they are; without the rollout worker rollouts do not move on.
type Worker struct {
	name string
	run  func(ctx context.Context, ready func())
}

// Name says what the worker does.
func (w Worker) Name() string { return w.name }

// Run works until ctx ends, calling ready once it works.
func (w Worker) Run(ctx context.Context, ready func()) { w.run(ctx, ready) }

// Workers is every worker of the store, in the order they should start: the committer and the
// watcher first, which the requests lean on, then the rest.
func (s *Store) Workers() []workers.Worker {
	return []workers.Worker{s.Committer(), s.Watcher(), s.Checkpointer(), s.Mover(), s.Rollouts()}
}

// Committer commits the reports that arrive together in one transaction (batch.go).
func (s *Store) Committer() Worker { return Worker{"committer", s.commitBatches} }

// Watcher rings the long-polls of nodes whose generation another controller moved. It is ready
// once a change committed after that is sure to ring: long-polls read their generation after.
func (s *Store) Watcher() Worker {
	if run := s.eng.Watch(s.log, func(node string) { s.bells.ring(node) }, s.bells.ringAll); run != nil {
		return Worker{"watcher", run}
	}
	return Worker{"watcher", s.watchGenerations}
}

// Checkpointer keeps the engine's log from growing without bound beside the writer; on
// PostgreSQL, whose server checkpoints its own log, it has nothing to do.
func (s *Store) Checkpointer() Worker {
	if run := s.eng.Checkpoints(s.opt.CheckpointEvery, s.log); run != nil {
		return Worker{"checkpointer", run}
	}
	return Worker{"checkpointer", idle}
}

// Mover moves pins to a new revision in chunks, and keeps placements' memberships true (moves.go).
func (s *Store) Mover() Worker { return Worker{"mover", s.moveLoop} }

// Rollouts moves rollouts on in waves (rollouts.go).
func (s *Store) Rollouts() Worker { return Worker{"rollouts", s.rolloutLoop} }

// idle is a worker's run that has nothing to do until ctx ends.
func idle(ctx context.Context, ready func()) {
	ready()
	<-ctx.Done()
}
