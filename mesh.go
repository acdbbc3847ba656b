package hq

import "fmt"

// MeshStatus is the summary of every node at once.
type MeshStatus struct {
	Nodes         map[string]int  `json:"nodes"`
	Stuck         []MeshStuck     `json:"stuck"`
	WaitingOnTake []WaitingOnTake `json:"waiting_on_take"`
	RefusedSends  []RefusedSend   `json:"refused_sends"`
	// Drifting lists the resources that drift most across the mesh in the last 24 hours.
	Drifting []MeshDrift `json:"drifting"`
	// Rollouts are the unfinished rollouts, each with its line.
	Rollouts []Rollout `json:"rollouts"`
	Lines    []string  `json:"lines"`
}

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
