package db

import (
	"context"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/internal/dbsqlc"
)

// MeshStatus summarises every node: counts by status, each stuck resource once with its
// scope, what waits on a take, refused sends, what drifts most, and the controller's own
// trouble writing, if any.
func (s *Store) MeshStatus(ctx context.Context) (hq.MeshStatus, error) {
	_, st, err := s.Mesh(ctx)
	return st, err
}

// Mesh returns every node's view and the mesh summary made from them.
func (s *Store) Mesh(ctx context.Context) ([]hq.NodeView, hq.MeshStatus, error) {
	nodes, err := s.ListNodes(ctx)
	if err != nil {
		return nil, hq.MeshStatus{}, err
	}
	st := hq.SummarizeMesh(nodes)
	top, err := s.reader().DriftTopSince(ctx, dbsqlc.DriftTopSinceParams{Since: hq.FormatTime(s.Now().Add(-24 * time.Hour)), Max: 10})
	if err != nil {
		return nil, hq.MeshStatus{}, err
	}
	for _, d := range top {
		md := hq.MeshDrift{Module: d.Module, Resource: d.Resource, Nodes: int(d.Nodes), Drifts: int(d.Drifts)}
		st.Drifting = append(st.Drifting, md)
		st.Lines = append(st.Lines, md.Line())
	}
	if t, ok := s.Trouble(); ok {
		st.Lines = append([]string{t.Line()}, st.Lines...)
	}
	return nodes, st, nil
}
