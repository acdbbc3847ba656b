package db

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// rollbackAtOnce is the policy of a rollback of a placement that has none: such a placement
// moves every node at once, and so does its rollback.
var rollbackAtOnce = hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 100, Percent: true}}

// RollbackPlacement starts a rollout of a placement's nodes back to an earlier revision of its
// module, under the placement's rollout policy (every node at once for a placement with
// none): canaries, waves, failure budget, pause, resume, promote and abort as for a new
// revision. An unfinished rollout of the placement ends aborted, superseded. Until the module
// has a newer revision the mover leaves the placement's pins to the rollback, and a node
// joining the placement is assigned the revision it went back to; a new revision rolls out
// as ever. A revision the module does not have is not found; a placement whose every node is
// at the revision already is a conflict; either changes nothing.
func (s *Store) RollbackPlacement(ctx context.Context, name string, revision int64) (hq.Rollout, error) {
	var id int64
	err := s.inTx(ctx, func(q driver.Queries) error {
		p, err := q.PlacementGet(ctx, name)
		if err != nil {
			return notFound(err, "no placement %s", name)
		}
		newest, err := latestRevision(ctx, q, p.Module)
		if err != nil {
			return notFound(err, "no module %s", p.Module)
		}
		if revision < 1 || revision > newest.Revision {
			return hq.Errorf(hq.CodeNotFound, "module %s has no revision %d: its revisions are 1 to %d", p.Module, revision, newest.Revision)
		}
		resources, err := s.resources(ctx, q, p.Module, revision)
		if err != nil {
			return notFound(err, "module %s has no revision %d", p.Module, revision)
		}
		if err := s.checkRollback(ctx, q, p, revision, resources); err != nil {
			return err
		}
		policy := p.Rollout
		if policy == "" {
			b, err := json.Marshal(rollbackAtOnce)
			if err != nil {
				return err
			}
			policy = string(b)
		}
		id, err = s.beginRollout(ctx, q, p, policy, newRollout{to: revision, rollbackOf: newest.Revision,
			superseded: fmt.Sprintf("superseded by a rollback to revision %d", revision),
			reason:     fmt.Sprintf("rollback of placement %s to revision %d by an operator", name, revision)})
		if err != nil {
			return err
		}
		return steered(ctx, q, id, "rollback")
	})
	if err != nil {
		return hq.Rollout{}, err
	}
	s.rolloutsActive.Store(true)
	s.WakeRollouts()
	return s.GetRollout(ctx, id)
}

// checkRollback refuses a rollback that would move no node, or declare on a node what it
// cannot fill in or a path another module there declares, as an upload of that revision would
// be refused.
func (s *Store) checkRollback(ctx context.Context, q driver.Queries, p driver.Placement, revision int64, resources []hq.Resource) error {
	pins, err := q.AssignmentListBySource(ctx, driver.AssignmentListBySourceParams{Source: p.Name, Module: p.Module})
	if err != nil {
		return err
	}
	nodes := make([]string, 0, len(pins))
	moving := false
	for _, a := range pins {
		nodes = append(nodes, a.Node)
		moving = moving || a.Revision != revision
	}
	if !moving {
		return hq.Errorf(hq.CodeConflict, "placement %s has no node off revision %d of %s: nothing to roll back", p.Name, revision, p.Module)
	}
	if err := s.checkSizeOnNodes(ctx, q, p.Module, revision, nodes); err != nil {
		return err
	}
	if err := checkRenderOnNodes(ctx, q, p.Module, resources, nodes); err != nil {
		return err
	}
	return newPathCheck(p.Module, resources).checkModule(ctx, q, nodes)
}
