package db

import (
	"github.com/meshhq/hq/db/driver"

	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/meshhq/hq"
)

// SourceOperator is the source of an assignment an operator made node by node.
const SourceOperator = hq.SourceOperator

// Assign puts a module on a node (or changes whether it is taken) and returns the node's
// generation, bumped when the declaration changed. A nil taken keeps an existing assignment's
// flag and makes a new one untaken.
func (s *Store) Assign(ctx context.Context, node, module string, taken *bool, ifMatch *int64) (int64, error) {
	return s.changeDeclaration(ctx, node, ifMatch, func(ctx context.Context, q driver.Queries) (bool, error) {
		m, err := q.ModuleGet(ctx, module)
		if err != nil {
			return false, notFound(err, "no module %s", module)
		}
		a, err := q.AssignmentGet(ctx, driver.AssignmentGetParams{Node: node, Module: module})
		switch {
		case err == nil && (taken == nil || (a.Taken) == *taken):
			return false, nil // already so: nothing changes, the generation stays
		case err == nil:
			if err := q.AssignmentSetTaken(ctx, driver.AssignmentSetTakenParams{Node: node, Module: module, Taken: *taken}); err != nil {
				return false, err
			}
			return true, q.AssignmentSetTakenBy(ctx, driver.AssignmentSetTakenByParams{By: takenBy(ctx, *taken), Node: node, Module: module})
		case !errors.Is(err, sql.ErrNoRows):
			return false, err
		}
		if err := q.AssignmentInsert(ctx, driver.AssignmentInsertParams{Node: node, Module: module, Taken: taken != nil && *taken,
			AssignedAt: s.now(), Revision: m.Revision, Source: SourceOperator}); err != nil {
			return false, err
		}
		if by := hq.Author(ctx); by != "" {
			if err := q.AssignmentSetAssignedBy(ctx, driver.AssignmentSetAssignedByParams{By: by, Node: node, Module: module}); err != nil {
				return false, err
			}
			if err := q.AssignmentSetTakenBy(ctx, driver.AssignmentSetTakenByParams{By: takenBy(ctx, taken != nil && *taken), Node: node, Module: module}); err != nil {
				return false, err
			}
		}
		// Decoded, digested and marshalled once for every node the revision is assigned to.
		resources, err := s.resources(ctx, q, module, m.Revision)
		if err != nil {
			return false, err
		}
		declared, err := s.declared(ctx, q, module, m.Revision)
		if err != nil {
			return false, err
		}
		// The node's other modules, read once for its paths and its declaration's size.
		rows, err := q.AssignmentListByNode(ctx, node)
		if err != nil {
			return false, err
		}
		pins := []pin{{module, m.Revision}}
		for _, o := range rows {
			if o.Module != module {
				pins = append(pins, pin{o.Module, o.Revision})
			}
		}
		if pc := newPathCheck(module, resources); len(pc.new) > 0 {
			if err := pc.against(ctx, q, node, pins[1:]); err != nil {
				return false, err
			}
		}
		n, err := q.NodeGet(ctx, node)
		if err != nil {
			return false, err
		}
		// The size first: it is worked out without rendering what it bounds.
		if err := s.checkSize(ctx, q, pins, valuesOf(n)); err != nil {
			return false, err
		}
		if err := checkRender(module, resources, valuesOf(n)); err != nil {
			return false, err
		}
		return true, redeclare(ctx, q, module, declared, []string{node}, s.now(), fmt.Sprintf("assigned %s revision %d", module, m.Revision))
	})
}

// Take marks an assigned module taken, so the node adopts what it finds, and returns the
// node's generation.
func (s *Store) Take(ctx context.Context, node, module string, ifMatch *int64) (int64, error) {
	return s.changeDeclaration(ctx, node, ifMatch, func(ctx context.Context, q driver.Queries) (bool, error) {
		a, err := q.AssignmentGet(ctx, driver.AssignmentGetParams{Node: node, Module: module})
		if err != nil {
			return false, notFound(err, "module %s is not assigned to node %s", module, node)
		}
		if a.Taken {
			return false, nil
		}
		if err := q.AssignmentSetTaken(ctx, driver.AssignmentSetTakenParams{Node: node, Module: module, Taken: true}); err != nil {
			return false, err
		}
		return true, q.AssignmentSetTakenBy(ctx, driver.AssignmentSetTakenByParams{By: hq.Author(ctx), Node: node, Module: module})
	})
}

// Unassign takes a module off a node; its resources leave the declaration (and the host
// removes what it manages of them). It returns the node's new generation.
func (s *Store) Unassign(ctx context.Context, node, module string, ifMatch *int64) (int64, error) {
	return s.changeDeclaration(ctx, node, ifMatch, func(ctx context.Context, q driver.Queries) (bool, error) {
		// A placement's assignment follows the node's labels; unassigning it would last only
		// until the placement put it back.
		if a, err := q.AssignmentGet(ctx, driver.AssignmentGetParams{Node: node, Module: module}); err == nil && a.Source != SourceOperator {
			return false, hq.Errorf(hq.CodeConflict, "module %s is on node %s by placement %s: change the node's labels or the placement", module, node, a.Source)
		}
		n, err := q.AssignmentDelete(ctx, driver.AssignmentDeleteParams{Node: node, Module: module})
		if err == nil && n == 0 {
			err = hq.Errorf(hq.CodeNotFound, "module %s is not assigned to node %s", module, node)
		}
		return err == nil, err
	})
}

// changeDeclaration runs change in one write transaction on a node checked against If-Match,
// bumps the node's generation in that transaction when change says the declaration changed,
// and wakes the node's long-polls. It returns the node's generation. The transaction may be
// shared with other writes waiting at the same moment (batch.go): an operator assigning a
// fleet node by node sends many at once.
func (s *Store) changeDeclaration(ctx context.Context, node string, ifMatch *int64, change func(ctx context.Context, q driver.Queries) (bool, error)) (int64, error) {
	var gen int64
	err := s.inBatchTx(ctx, func(ctx context.Context, q driver.Queries) error {
		n, err := lockNode(ctx, q, node, ifMatch)
		if err != nil {
			return err
		}
		gen = n.Generation
		changed, err := change(ctx, q)
		if err != nil || !changed {
			return withGeneration(err, gen)
		}
		gen, err = q.NodeBumpGeneration(ctx, node)
		return err
	})
	if err == nil {
		s.bells.ring(node)
	}
	return gen, err
}

// takenBy is who an assignment is taken by once it is set taken or not: the author, or no one.
func takenBy(ctx context.Context, taken bool) string {
	if !taken {
		return ""
	}
	return hq.Author(ctx)
}
