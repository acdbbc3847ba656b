package hq

import "fmt"

// NewMeshStatus is an empty summary, every list present.
func NewMeshStatus() MeshStatus {
	return MeshStatus{Nodes: map[string]int{"total": 0}, Stuck: []MeshStuck{}, WaitingOnTake: []WaitingOnTake{},
		RefusedSends: []RefusedSend{}, Drifting: []MeshDrift{}, Rollouts: []Rollout{}, Lines: []string{}}
}

// AddLines appends the mesh's lines for what it lists: stuck resources, what waits on a take,
// refused sends, then what drifts most.
func (st *MeshStatus) AddLines() {
	for _, ms := range st.Stuck {
		st.Lines = append(st.Lines, fmt.Sprintf("stuck %s: %s on %d node(s)", ms.Scope, Ref(ms.Module, ms.Resource), len(ms.Nodes)))
	}
	for _, w := range st.WaitingOnTake {
		st.Lines = append(st.Lines, fmt.Sprintf("%s: waiting on take: %s (%d held)", w.Node, w.Module, w.Held))
	}
	for _, r := range st.RefusedSends {
		st.Lines = append(st.Lines, r.Node+": "+RefusedLine(r))
	}
	for _, d := range st.Drifting {
		st.Lines = append(st.Lines, d.Line())
	}
	for _, r := range st.Rollouts {
		st.Lines = append(st.Lines, r.Line)
	}
}
