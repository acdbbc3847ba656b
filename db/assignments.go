package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/meshhq/hq"
)

// Assign puts a module on a node (or changes whether it is taken) and returns the node's
// generation, bumped when the declaration changed.
func (s *Store) Assign(ctx context.Context, node, module string, taken bool, ifMatch *int64) (int64, error) {
	var gen int64
	err := s.inTx(ctx, func(q *Queries) error {
		n, err := lockNode(ctx, q, node, ifMatch)
		if err != nil {
			return err
		}
		gen = n.Generation
		rev, err := latestRevision(ctx, q, module)
		if err != nil {
			return notFound(err, "no module %s", module)
		}
		a, err := q.AssignmentGet(ctx, AssignmentGetParams{Node: node, Module: module})
		switch {
		case err == nil && (a.Taken == 1) == taken:
			return nil // already so: nothing changes, the generation stays
		case err == nil:
			if err := q.AssignmentSetTaken(ctx, AssignmentSetTakenParams{Node: node, Module: module, Taken: boolInt(taken)}); err != nil {
				return err
			}
		case errors.Is(err, sql.ErrNoRows):
			if err := q.AssignmentInsert(ctx, AssignmentInsertParams{Node: node, Module: module, Taken: boolInt(taken), AssignedAt: s.now()}); err != nil {
				return err
			}
			resources, err := decodeResources(rev.Resources)
			if err != nil {
				return err
			}
			if err := s.declare(ctx, q, node, module, resources, fmt.Sprintf("assigned %s revision %d", module, rev.Revision)); err != nil {
				return err
			}
		default:
			return err
		}
		gen, err = q.NodeBumpGeneration(ctx, node)
		return err
	})
	if err == nil {
		s.bells.ring(node)
	}
	return gen, err
}

// Take marks an assigned module taken, so the node adopts what it finds, and returns the
// node's generation.
func (s *Store) Take(ctx context.Context, node, module string, ifMatch *int64) (int64, error) {
	var gen int64
	err := s.inTx(ctx, func(q *Queries) error {
		n, err := lockNode(ctx, q, node, ifMatch)
		if err != nil {
			return err
		}
		gen = n.Generation
		a, err := q.AssignmentGet(ctx, AssignmentGetParams{Node: node, Module: module})
		if err != nil {
			return notFound(err, "module %s is not assigned to node %s", module, node)
		}
		if a.Taken == 1 {
			return nil
		}
		if err := q.AssignmentSetTaken(ctx, AssignmentSetTakenParams{Node: node, Module: module, Taken: 1}); err != nil {
			return err
		}
		gen, err = q.NodeBumpGeneration(ctx, node)
		return err
	})
	if err == nil {
		s.bells.ring(node)
	}
	return gen, err
}

// Unassign takes a module off a node; its resources leave the declaration (and the host
// removes what it manages of them). It returns the node's new generation.
func (s *Store) Unassign(ctx context.Context, node, module string, ifMatch *int64) (int64, error) {
	var gen int64
	err := s.inTx(ctx, func(q *Queries) error {
		if _, err := lockNode(ctx, q, node, ifMatch); err != nil {
			return err
		}
		n, err := q.AssignmentDelete(ctx, AssignmentDeleteParams{Node: node, Module: module})
		if err != nil {
			return err
		}
		if n == 0 {
			return hq.Errorf(hq.CodeNotFound, "module %s is not assigned to node %s", module, node)
		}
		gen, err = q.NodeBumpGeneration(ctx, node)
		return err
	})
	if err == nil {
		s.bells.ring(node)
	}
	return gen, err
}
