package hq

import "time"

// StuckView is one stuck resource on one node.
type StuckView struct {
	Module       string    `json:"module"`
	Resource     string    `json:"resource"`
	Attempts     int64     `json:"attempts"`
	Since        time.Time `json:"since"`
	NeverApplied bool      `json:"never_applied"`
	Blocks       int       `json:"blocks"`
	Scope        string    `json:"scope"`
}

// MeshStuck is one stuck resource, listed once however many nodes it is stuck on.
type MeshStuck struct {
	Module       string   `json:"module"`
	Resource     string   `json:"resource"`
	Scope        string   `json:"scope"`
	Nodes        []string `json:"nodes"`
	NeverApplied bool     `json:"never_applied"`
	Blocks       int      `json:"blocks"`
}

// Scopes of a stuck resource.
const (
	ScopeNodeLocal = "node-local"
	ScopeMeshWide  = "mesh-wide"
)

// StuckScope says whether a resource stuck on stuckOn nodes, of assigned nodes that have its
// module, is a fault of the mesh or of the nodes.
func StuckScope(stuckOn, assigned int) string {
	if stuckOn >= 2 && 2*stuckOn >= assigned {
		return ScopeMeshWide
	}
	return ScopeNodeLocal
}
