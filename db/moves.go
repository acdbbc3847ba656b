package db

import (
	"context"
	"fmt"
	"time"

	"github.com/meshhq/hq/db/driver"
)

// A new revision reaches a fleet in chunks, one transaction each, so the one writer is never
// held for long and reports land between chunks: a chunk writes about moveChunkRows resource
// rows, on at most moveChunkNodes nodes.
const (
	moveChunkRows  = 1000
	moveChunkNodes = 500
)

// movePins moves the next chunk of module's pins that are behind revision to, in q's
// transaction: it re-declares what changed on those nodes and bumps their generations. It
// returns the new generations and whether pins remain behind.
func (s *Store) movePins(ctx context.Context, q driver.Queries, module string, to int64) (map[string]int64, bool, error) {
	behind, err := q.AssignmentListBehind(ctx, driver.AssignmentListBehindParams{Module: module, Revision: to, Max: moveChunkNodes + 1})
	if err != nil || len(behind) == 0 {
		return nil, false, err
	}
	from := behind[0].Revision
	fromRes, err := s.resources(ctx, q, module, from)
	if err != nil {
		return nil, false, err
	}
	toRes, err := s.resources(ctx, q, module, to)
	if err != nil {
		return nil, false, err
	}
	d := diffResources(fromRes, toRes, to)
	limit := min(moveChunkNodes, max(1, moveChunkRows/max(1, d.rows())))
	var nodes []string
	for _, b := range behind {
		if b.Revision != from || len(nodes) == limit {
			break
		}
		nodes = append(nodes, b.Node)
	}
	gens, err := s.pinNodes(ctx, q, module, d, to, nodes, fmt.Sprintf("module %s revision %d", module, to))
	return gens, len(behind) > len(nodes), err
}

// pinNodes pins nodes to revision to of module, writes the diff on them and bumps their
// generations, in q's transaction.
func (s *Store) pinNodes(ctx context.Context, q driver.Queries, module string, d resourceDiff, to int64, nodes []string, reason string) (map[string]int64, error) {
	if err := redeclare(ctx, q, module, d, nodes, s.now(), reason); err != nil {
		return nil, err
	}
	if err := q.AssignmentPinNodes(ctx, driver.AssignmentPinNodesParams{Revision: to, Module: module, Nodes: nodes}); err != nil {
		return nil, err
	}
	bumped, err := q.NodeBumpGenerations(ctx, nodes)
	gens := make(map[string]int64, len(bumped))
	for _, b := range bumped {
		gens[b.Name] = b.Generation
	}
	return gens, err
}

// wakeMover tells the mover there is work.
func (s *Store) wakeMover() {
	select {
	case s.moveBell <- struct{}{}:
	default: // already told
	}
}

// moveLoop is the mover's run: it moves the pins a new revision has still to reach, and makes
// placements' memberships true, a chunk per transaction, until nothing is left; it wakes on
// wakeMover and every MoveEvery (for work left by a crash or by another controller). It runs
// from the start whether or not there is work yet, because work another controller began is
// this one's to finish when that one dies; idle, it is one cheap read a period.
func (s *Store) moveLoop(ctx context.Context, ready func()) {
	ready()
	tick := time.NewTicker(s.opt.MoveEvery)
	defer tick.Stop()
	for {
		for {
			more, err := s.moveSome(ctx)
			if err == nil && !more {
				// Placements follow the labels: what a placement's selector gained or lost.
				more, err = s.placeSome(ctx)
			}
			if err != nil && ctx.Err() == nil {
				s.log.Error("moving pins to a new revision", "err", err)
			}
			if err != nil || !more {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.moveBell:
		case <-tick.C:
		}
	}
}

// moveSome moves one chunk of pins of the first module that has any behind, and reports
// whether there was work to do.
func (s *Store) moveSome(ctx context.Context) (bool, error) {
	var gens map[string]int64
	var found bool
	err := s.inTx(ctx, func(q driver.Queries) error {
		mods, err := q.ModuleListBehind(ctx)
		if err != nil || len(mods) == 0 {
			return err
		}
		found = true
		gens, _, err = s.movePins(ctx, q, mods[0].Name, mods[0].Revision)
		return err
	})
	if err == nil {
		s.ringAll(gens)
	}
	return found && err == nil, err
}

// ringAll wakes the long-polls of every node whose generation moved.
func (s *Store) ringAll(gens map[string]int64) {
	for n := range gens {
		s.bells.ring(n)
	}
}
