package hq

import (
	"fmt"
	"time"
)

// DriftWindow is how far back a node's drift lines look, and DriftThreshold the default
// count of put-backs within it that makes a resource a drifting one.
const (
	DriftWindow    = time.Hour
	DriftThreshold = 3
)

// DriftView is one change made on a machine behind hostd's back that hostd put back.
type DriftView struct {
	ID       int64     `json:"id"`
	Module   string    `json:"module"`
	Resource string    `json:"resource"`
	At       time.Time `json:"at"`
	ReportID *int64    `json:"report_id,omitempty"`
	Detail   string    `json:"detail"`
	// Found is what hostd found in a drifted small text file (Result.DriftFound), when it said.
	Found *string `json:"found,omitempty"`
}

// DriftCount is how often one resource of a node was put back within DriftWindow.
type DriftCount struct {
	Module   string `json:"module"`
	Resource string `json:"resource"`
	Count    int    `json:"count"`
}

// Line is the node's status line for a resource that keeps drifting.
func (d DriftCount) Line() string {
	return fmt.Sprintf("drift: %s put back %d time(s) in the last hour", Ref(d.Module, d.Resource), d.Count)
}

// MeshDrift is a resource that drifts across the mesh: on how many nodes, how many times.
type MeshDrift struct {
	Module   string `json:"module"`
	Resource string `json:"resource"`
	Nodes    int    `json:"nodes"`
	Drifts   int    `json:"drifts"`
}

// Line is the mesh's status line for it.
func (d MeshDrift) Line() string {
	return fmt.Sprintf("drift: %s put back %d time(s) on %d node(s) in the last 24h", Ref(d.Module, d.Resource), d.Drifts, d.Nodes)
}
