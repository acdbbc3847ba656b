package db

import (
	"context"

	"github.com/meshhq/hq"
)

// MeshStatus summarises every node: counts by status, each stuck resource once with its
// scope, what waits on a take, and refused sends.
func (s *Store) MeshStatus(ctx context.Context) (hq.MeshStatus, error) {
	nodes, err := s.ListNodes(ctx)
	if err != nil {
		return hq.MeshStatus{}, err
	}
	st := hq.SummarizeMesh(nodes)
	if t, ok := s.Trouble(); ok {
		st.Lines = append([]string{t.Line()}, st.Lines...)
	}
	return st, nil
}
