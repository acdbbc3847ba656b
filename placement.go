package hq

import "time"

// SourceOperator is the source of an assignment an operator made node by node; a placement's
// assignments have the placement's name as their source.
const SourceOperator = "operator"

// Placement assigns a module to every node its selector matches, now and later.
type Placement struct {
	Name     string `json:"name"`
	Module   string `json:"module"`
	Selector string `json:"selector"`
	Taken    bool   `json:"taken"`
	// Rollout, when set, moves a new revision of the module to these nodes in waves.
	Rollout *RolloutPolicy `json:"rollout,omitempty"`
	// Matched is how many registered nodes the selector matches now; Assigned is how many of
	// them have the module from this placement (they differ while a change is under way, or
	// where a node has the module from elsewhere).
	Matched   int       `json:"matched"`
	Assigned  int       `json:"assigned"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}
