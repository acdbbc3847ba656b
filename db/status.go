package db

import (
	"context"
	"fmt"

	"github.com/meshhq/hq"
)

// MeshStatus summarises every node: counts by status, each stuck resource once with its
// scope, what waits on a take, and refused sends. NodeViews carries the nodes it was made from.
func (s *Store) MeshStatus(ctx context.Context) (hq.MeshStatus, error) {
	nodes, err := s.ListNodes(ctx)
	if err != nil {
		return hq.MeshStatus{}, err
	}
	return Summarize(nodes), nil
}

// Summarize builds the mesh summary from node views.
func Summarize(nodes []hq.NodeView) hq.MeshStatus {
	st := hq.MeshStatus{
		Nodes: map[string]int{"total": len(nodes)}, Stuck: []hq.MeshStuck{},
		WaitingOnTake: []hq.WaitingOnTake{}, RefusedSends: []hq.RefusedSend{}, Lines: []string{}, NodeViews: nodes,
	}
	stuck := map[string]*hq.MeshStuck{}
	var order []string
	for _, n := range nodes {
		st.Nodes[string(n.Status)]++
		for _, sv := range n.Stuck {
			ref := hq.Ref(sv.Module, sv.Resource)
			ms, ok := stuck[ref]
			if !ok {
				ms = &hq.MeshStuck{Module: sv.Module, Resource: sv.Resource, Scope: sv.Scope, NeverApplied: true}
				stuck[ref] = ms
				order = append(order, ref)
			}
			ms.Nodes = append(ms.Nodes, n.Name)
			ms.NeverApplied = ms.NeverApplied && sv.NeverApplied
			ms.Blocks += sv.Blocks
		}
		held := map[string]int{}
		var mods []string
		for _, h := range n.Holds {
			if held[h.Module] == 0 {
				mods = append(mods, h.Module)
			}
			held[h.Module]++
		}
		for _, m := range mods {
			st.WaitingOnTake = append(st.WaitingOnTake, hq.WaitingOnTake{Node: n.Name, Module: m, Held: held[m]})
		}
	}
	for _, ref := range order {
		ms := stuck[ref]
		st.Stuck = append(st.Stuck, *ms)
		st.Lines = append(st.Lines, fmt.Sprintf("stuck %s: %s on %d node(s)", ms.Scope, ref, len(ms.Nodes)))
	}
	for _, w := range st.WaitingOnTake {
		st.Lines = append(st.Lines, fmt.Sprintf("%s: waiting on take: %s (%d held)", w.Node, w.Module, w.Held))
	}
	for _, n := range nodes {
		for _, r := range n.RefusedSends {
			st.RefusedSends = append(st.RefusedSends, r)
			st.Lines = append(st.Lines, n.Name+": "+hq.RefusedLine(r))
		}
	}
	return st
}
