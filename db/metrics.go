package db

import (
	"context"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// Figures are the numbers /metrics shows, read from one snapshot of the database.
type Figures struct {
	// Nodes counts the registered nodes by status, every status present.
	Nodes map[hq.Status]int
	// Resources counts every node's resources by state, every state present.
	Resources map[hq.State]int
	// Stuck counts the stuck resources, each once however many nodes it is stuck on (as
	// /status lists them), by scope.
	Stuck map[string]int
	// Sends counts the sends retention keeps, by outcome.
	Sends map[string]int
	// Rollouts counts the rollouts by state, every state present.
	Rollouts map[hq.RolloutState]int
	// Unfinished are the rollouts under way or paused, each with its nodes by state.
	Unfinished []RolloutFigures
	// DatabaseBytes and WALBytes are the sizes of the database file and its write-ahead log.
	DatabaseBytes, WALBytes int64
}

// RolloutFigures are an unfinished rollout's nodes by state (pending, in-flight, done, failed;
// failed counts the reverted too), from the counts the rollout worker keeps on its row.
type RolloutFigures struct {
	ID        int64
	Module    string
	Placement string
	Nodes     map[string]int
}

// SendOutcomes lists every outcome a send can have.
var SendOutcomes = []string{"sent", "applied", "refused", "superseded"}

// Figures reads the figures. Resources by state are summed from the per-node counters the
// triggers keep in nodes, so the cost grows with the nodes, never with every resource row;
// stuck resources come from the partial index over what is not fine.
func (s *Store) Figures(ctx context.Context) (Figures, error) {
	f := Figures{Nodes: map[hq.Status]int{}, Resources: map[hq.State]int{}, Stuck: map[string]int{}, Sends: map[string]int{},
		Rollouts: map[hq.RolloutState]int{}}
	for _, st := range hq.RolloutStates {
		f.Rollouts[st] = 0
	}
	for _, st := range hq.Statuses {
		f.Nodes[st] = 0
	}
	for _, st := range hq.States {
		f.Resources[st] = 0
	}
	f.Stuck[hq.ScopeNodeLocal], f.Stuck[hq.ScopeMeshWide] = 0, 0
	for _, o := range SendOutcomes {
		f.Sends[o] = 0
	}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		counts, err := fleetCounts(ctx, q, s.silentBefore())
		if err != nil {
			return err
		}
		for st, n := range counts.nodes {
			f.Nodes[st] += n
		}
		for st, n := range counts.resources {
			f.Resources[st] += n
		}
		st := hq.NewMeshStatus()
		if err := meshStuck(ctx, q, nil, &st); err != nil {
			return err
		}
		for _, ms := range st.Stuck {
			f.Stuck[ms.Scope]++
		}
		sends, err := q.SendCountByOutcome(ctx)
		if err != nil {
			return err
		}
		for _, r := range sends {
			f.Sends[r.Outcome] = int(r.Sends)
		}
		return rolloutFigures(ctx, q, &f)
	})
	if err != nil {
		return Figures{}, err
	}
	if f.DatabaseBytes, f.WALBytes, err = s.eng.Sizes(ctx); err != nil {
		return Figures{}, err
	}
	return f, nil
}

// rolloutFigures reads the rollouts by state, and the nodes of each unfinished one.
func rolloutFigures(ctx context.Context, q driver.Queries, f *Figures) error {
	counts, err := q.RolloutCountByState(ctx)
	if err != nil {
		return err
	}
	for _, c := range counts {
		f.Rollouts[hq.RolloutState(c.State)] = int(c.Rollouts)
	}
	active, err := q.RolloutListActive(ctx)
	if err != nil {
		return err
	}
	for _, r := range active {
		f.Unfinished = append(f.Unfinished, RolloutFigures{ID: r.ID, Module: r.Module, Placement: r.Placement, Nodes: map[string]int{
			hq.RolloutNodePending:  int(r.Nodes - r.Done - r.InFlight - r.Failed),
			hq.RolloutNodeInFlight: int(r.InFlight),
			hq.RolloutNodeDone:     int(r.Done),
			hq.RolloutNodeFailed:   int(r.Failed),
		}})
	}
	return nil
}
