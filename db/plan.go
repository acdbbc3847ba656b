package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// dryRunKey marks a context whose write transactions are rolled back instead of committed: a
// plan runs the real code of a change and keeps nothing of it. Its value, a *dryRun, takes
// what the plan shows that the rolled-back writes made.
type dryRunKey struct{}

type dryRun struct {
	rollouts []hq.PlanRollout
	ids      int64
}

// rolloutID is the id of the dry run's next rollout: negative, so that it meets no real
// rollout's, and given here rather than drawn, because a rolled-back transaction still uses up
// what it draws from a PostgreSQL sequence.
func (d *dryRun) rolloutID() int64 {
	d.ids--
	return d.ids
}

// planned tells a dry run of the rollout the change started: its placement and its nodes in
// waves, as they were written.
func planned(ctx context.Context, q driver.Queries, id int64, p driver.Placement) error {
	run, ok := ctx.Value(dryRunKey{}).(*dryRun)
	if !ok {
		return nil
	}
	nodes, err := q.RolloutNodeList(ctx, id)
	if err != nil {
		return err
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Node
	}
	slices.Sort(names) // the order the rollout takes them in
	pol, err := rolloutPolicy(p.Rollout)
	if err != nil {
		return fmt.Errorf("placement %s: %w", p.Name, err)
	}
	run.rollouts = append(run.rollouts, hq.PlanRollout{Placement: p.Name, Policy: pol, Waves: pol.Waves(names)})
	return nil
}

// errDryRun is what a transaction in a dry run returns in place of committing.
var errDryRun = errors.New("dry run: rolled back")

// PlanModule works out what PutModule would do with the same arguments by running it in a
// write transaction that is rolled back: the same checks and writes, none of them kept. An
// invalid module is the same error as the upload's; a conflict is a line of the plan.
func (s *Store) PlanModule(ctx context.Context, name string, resources []hq.Resource) (hq.ModulePlan, error) {
	plan := hq.ModulePlan{Module: name, Added: []string{}, Changed: []string{}, Moved: []string{}, Removed: []string{},
		Nodes: []hq.PlanNode{}, Conflicts: []string{}, Rollouts: []hq.PlanRollout{}, Warnings: []string{}}
	var current []hq.Resource
	var assigned []string
	gens := map[string]int64{}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		if rev, err := latestRevision(ctx, q, name); err == nil {
			plan.Revision = rev.Revision
			if current, err = decodeResources(rev.Resources); err != nil {
				return err
			}
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var err error
		if assigned, err = assignedNodes(ctx, q, name); err != nil {
			return err
		}
		rows, err := q.NodeGenerationList(ctx)
		for _, r := range rows {
			gens[r.Name] = r.Generation
		}
		return err
	})
	if err != nil {
		return plan, err
	}
	run := &dryRun{}
	res, err := s.PutModule(context.WithValue(ctx, dryRunKey{}, run), name, resources)
	switch {
	case errors.Is(err, errDryRun):
	case hq.ErrorCode(err) == hq.CodeConflict:
		e, _ := errors.AsType[*hq.Error](err)
		plan.Conflicts = append(plan.Conflicts, e.Message)
		res.Revision, res.Created = plan.Revision+1, true
	case err != nil:
		return plan, err
	}
	plan.Revision, plan.Unchanged = res.Revision, !res.Created
	if plan.Unchanged {
		return plan, nil
	}
	d := diffResources(current, resources, plan.Revision)
	for _, part := range []struct {
		rows []declRow
		out  *[]string
	}{{d.added, &plan.Added}, {d.changed, &plan.Changed}, {d.moved, &plan.Moved}} {
		for _, r := range part.rows {
			*part.out = append(*part.out, r.Name)
		}
	}
	plan.Removed = append(plan.Removed, d.removed...)
	plan.Warnings = append(plan.Warnings, hq.VolumeWarnings(name, current, resources)...)
	if len(plan.Conflicts) > 0 {
		return plan, nil // refused: no node would move
	}
	plan.Rollouts = append(plan.Rollouts, run.rollouts...)
	wave := map[string]int{}
	for _, r := range run.rollouts {
		for i, w := range r.Waves {
			for _, n := range w {
				wave[n] = i + 1
			}
		}
	}
	slices.Sort(assigned)
	for _, n := range assigned {
		to, ok := res.Generations[n]
		if !ok {
			to = gens[n] + 1 // past the first chunk, or in a rollout's wave: moved later, one step
		}
		plan.Nodes = append(plan.Nodes, hq.PlanNode{Node: n, Generation: gens[n], ToGeneration: to, Wave: wave[n]})
	}
	return plan, nil
}
