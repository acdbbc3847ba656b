package hq

import "fmt"

// SummarizeMesh builds the mesh summary from node views.
func SummarizeMesh(nodes []NodeView) MeshStatus {
	st := MeshStatus{
		Nodes: map[string]int{"total": len(nodes)}, Stuck: []MeshStuck{},
		WaitingOnTake: []WaitingOnTake{}, RefusedSends: []RefusedSend{}, Drifting: []MeshDrift{}, Lines: []string{},
	}
	stuck := map[string]*MeshStuck{}
	var order []string
	for _, n := range nodes {
		st.Nodes[string(n.Status)]++
		for _, sv := range n.Stuck {
			ref := Ref(sv.Module, sv.Resource)
			ms, ok := stuck[ref]
			if !ok {
				ms = &MeshStuck{Module: sv.Module, Resource: sv.Resource, Scope: sv.Scope, NeverApplied: true}
				stuck[ref] = ms
				order = append(order, ref)
			}
			ms.Nodes = append(ms.Nodes, n.Name)
			ms.NeverApplied = ms.NeverApplied && sv.NeverApplied
			ms.Blocks += sv.Blocks
		}
		held := CountHolds(n.Holds)
		for _, m := range held.Modules() {
			st.WaitingOnTake = append(st.WaitingOnTake, WaitingOnTake{Node: n.Name, Module: m, Held: held[m]})
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
			st.Lines = append(st.Lines, n.Name+": "+RefusedLine(r))
		}
	}
	return st
}
