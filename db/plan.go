package db

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/internal/dbsqlc"
)

// dryRunKey marks a context whose write transactions are rolled back instead of committed: a
// plan runs the real code of a change and keeps nothing of it.
type dryRunKey struct{}

// errDryRun is what a transaction in a dry run returns in place of committing.
var errDryRun = errors.New("dry run: rolled back")

// ModulePlan is what an upload of a module would do.
type ModulePlan struct {
	Module string `json:"module"`
	// Revision is the revision the upload would make, or the newest when it is Unchanged
	// (identical to the newest, so it would change nothing).
	Revision  int64 `json:"revision"`
	Unchanged bool  `json:"unchanged"`
	// Added, Changed and Removed name resources against the newest revision; Moved ones keep
	// their spec but take another place or group.
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Moved   []string `json:"moved"`
	Removed []string `json:"removed"`
	// Nodes are the nodes whose generation would move.
	Nodes []PlanNode `json:"nodes"`
	// Conflicts say why the upload would be refused (409): paths that would overlap on a node.
	Conflicts []string `json:"conflicts"`
}

// PlanNode is one node an upload would move: its generation now and the one it would get.
type PlanNode struct {
	Node         string `json:"node"`
	Generation   int64  `json:"generation"`
	ToGeneration int64  `json:"to_generation"`
}

// PlanModule works out what PutModule would do with the same arguments by running it in a
// write transaction that is rolled back: the same checks and writes, none of them kept. An
// invalid module is the same error as the upload's; a conflict is a line of the plan.
func (s *Store) PlanModule(ctx context.Context, name string, resources []hq.Resource) (ModulePlan, error) {
	plan := ModulePlan{Module: name, Added: []string{}, Changed: []string{}, Moved: []string{}, Removed: []string{},
		Nodes: []PlanNode{}, Conflicts: []string{}}
	var current []hq.Resource
	var assigned []string
	gens := map[string]int64{}
	err := s.inReadTx(ctx, func(q dbsqlc.Querier) error {
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
	res, err := s.PutModule(context.WithValue(ctx, dryRunKey{}, true), name, resources)
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
	if len(plan.Conflicts) > 0 {
		return plan, nil // refused: no node would move
	}
	slices.Sort(assigned)
	for _, n := range assigned {
		to, ok := res.Generations[n]
		if !ok {
			to = gens[n] + 1 // past the first chunk: the mover would move it, one step
		}
		plan.Nodes = append(plan.Nodes, PlanNode{Node: n, Generation: gens[n], ToGeneration: to})
	}
	return plan, nil
}
