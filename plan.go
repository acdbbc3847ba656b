package hq

// ModulePlan is what an upload of a module would do.
type ModulePlan struct {
	Module string `json:"module"`
	// Revision is the revision the upload would make, or the newest when it is Unchanged
	// (identical to the newest, so it would change nothing).
	Revision  int64 `json:"revision"`
	Unchanged bool  `json:"unchanged"`
	// Added, Changed and Removed name resources against the newest revision; Moved ones keep
	// their spec but take another place or group.
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Moved   []string `json:"moved"`
	Removed []string `json:"removed"`
	// Nodes are the nodes whose generation would move.
	Nodes []PlanNode `json:"nodes"`
	// Conflicts say why the upload would be refused (409): paths that would overlap on a node.
	Conflicts []string `json:"conflicts"`
	// Rollouts are the rollouts the upload would start, for placements with a rollout policy:
	// their nodes move in waves, not at once.
	Rollouts []PlanRollout `json:"rollouts"`
}

// PlanRollout is a rollout an upload would start: its placement, its policy, and its nodes in
// the waves it would run if every node converged.
type PlanRollout struct {
	Placement string        `json:"placement"`
	Policy    RolloutPolicy `json:"policy"`
	Waves     [][]string    `json:"waves"`
}

// PlanNode is one node an upload would move: its generation now and the one it would get.
type PlanNode struct {
	Node         string `json:"node"`
	Generation   int64  `json:"generation"`
	ToGeneration int64  `json:"to_generation"`
	// Wave, when not 0, is the wave of a rollout the node would move in; 0 is at once.
	Wave int `json:"wave,omitempty"`
}
