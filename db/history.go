package db

import (
	"errors"
	"github.com/meshhq/hq/db/driver"

	"context"

	"github.com/meshhq/hq"
)

// Sends lists a node's sends, newest first.
func (s *Store) Sends(ctx context.Context, node string, limit int64) ([]hq.SendView, error) {
	rows, err := listForNode(ctx, s, node, func(q driver.Queries) ([]driver.Send, error) {
		return q.SendListByNode(ctx, driver.SendListByNodeParams{Node: node, Max: limit})
	})
	out := make([]hq.SendView, len(rows))
	for i, r := range rows {
		out[i] = hq.SendView{ID: r.ID, Generation: r.Generation, Digest: r.Digest, Resources: r.Resources, ComposedBy: r.ComposedBy, SentAt: hq.ParseTime(r.SentAt), Outcome: r.Outcome, Reason: r.Reason}
	}
	return out, err
}

// Reports lists a node's distinct reports, newest first.
func (s *Store) Reports(ctx context.Context, node string, limit int64) ([]hq.ReportView, error) {
	rows, err := listForNode(ctx, s, node, func(q driver.Queries) ([]driver.Report, error) {
		return q.ReportListByNode(ctx, driver.ReportListByNodeParams{Node: node, Max: limit})
	})
	out := make([]hq.ReportView, len(rows))
	for i, r := range rows {
		out[i] = *reportView(r)
	}
	return out, err
}

// Drifts lists what was changed on a node behind hostd's back and put back, newest first.
func (s *Store) Drifts(ctx context.Context, node string, limit int64) ([]hq.DriftView, error) {
	rows, err := listForNode(ctx, s, node, func(q driver.Queries) ([]driver.Drift, error) {
		return q.DriftListByNode(ctx, driver.DriftListByNodeParams{Node: node, Max: limit})
	})
	out := make([]hq.DriftView, len(rows))
	for i, r := range rows {
		out[i] = hq.DriftView{ID: r.ID, Module: r.Module, Resource: r.Resource, At: hq.ParseTime(r.At), Detail: r.Detail}
		if r.Found.Valid {
			out[i].Found = &r.Found.String
		}
		if r.ReportID.Valid {
			out[i].ReportID = &r.ReportID.Int64
		}
	}
	return out, err
}

// Transitions lists a node's changes of resource state, newest first.
func (s *Store) Transitions(ctx context.Context, node string, limit int64) ([]hq.TransitionView, error) {
	rows, err := listForNode(ctx, s, node, func(q driver.Queries) ([]driver.Transition, error) {
		return q.TransitionListByNode(ctx, driver.TransitionListByNodeParams{Node: node, Max: limit})
	})
	out := make([]hq.TransitionView, len(rows))
	for i, r := range rows {
		out[i] = hq.TransitionView{Module: r.Module, Resource: r.Resource, From: r.FromState.String, To: r.ToState, At: hq.ParseTime(r.At), Reason: r.Reason}
		if r.ReportID.Valid {
			out[i].ReportID = &r.ReportID.Int64
		}
	}
	return out, err
}

// listForNode runs list in a read snapshot after checking the node exists, or existed, so an
// unknown node is not_found rather than an empty list while a deleted one keeps its history.
func listForNode[T any](ctx context.Context, s *Store, node string, list func(driver.Queries) ([]T, error)) ([]T, error) {
	var rows []T
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		if _, err := q.NodeGetAny(ctx, node); err != nil {
			return notFound(err, "no node %s", node)
		}
		var err error
		rows, err = list(q)
		return err
	})
	return rows, err
}

// Retry zeroes a failed or stuck resource's count, returns it to pending, and asks the host
// to drop its back-off for it with the next report response or declaration. It returns the
// node's generation, also with its not_found (no such resource) and conflict (not failed or
// stuck, or ifMatch does not hold) errors.
func (s *Store) Retry(ctx context.Context, node, module, resource string, ifMatch *int64) (int64, error) {
	var gen int64
	err := s.inTx(ctx, func(q driver.Queries) error {
		nd, err := lockNode(ctx, q, node, ifMatch)
		if err != nil {
			return err
		}
		gen = nd.Generation
		n, err := q.ResourceStateRequestRetry(ctx, driver.ResourceStateRequestRetryParams{Node: node, Module: module, Resource: resource, Since: s.now()})
		if err != nil || n > 0 {
			return err
		}
		r, err := q.ResourceStateGet(ctx, driver.ResourceStateGetParams{Node: node, Module: module, Resource: resource})
		if err != nil {
			return withGeneration(notFound(err, "no resource %s on node %s", hq.Ref(module, resource), node), gen)
		}
		return withGeneration(hq.Errorf(hq.CodeConflict, "%s on node %s is %s; only a failed or stuck resource is retried", hq.Ref(module, resource), node, r.State), gen)
	})
	return gen, err
}

// withGeneration marks a coded error about a node with the node's generation, which the API
// answers as the ETag.
func withGeneration(err error, gen int64) error {
	if e, ok := errors.AsType[*hq.Error](err); ok && e.Generation == nil {
		e.Generation = &gen
	}
	return err
}
