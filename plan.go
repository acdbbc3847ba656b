package hq

import "fmt"

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
	// Warnings say what the upload would do that an operator may not expect: a container's
	// volume whose host path moves, with nothing copied.
	Warnings []string `json:"warnings"`
}

// VolumeWarnings warn of every container of after whose volume moves to another host path
// than the same container of before mounts there.
func VolumeWarnings(module string, before, after []Resource) []string {
	was := make(map[string]Resource, len(before))
	for _, r := range before {
		was[r.Name] = r
	}
	var out []string
	for _, r := range after {
		old, ok := was[r.Name]
		if !ok || r.Kind != KindContainer || old.Kind != KindContainer {
			continue
		}
		for _, v := range MovedVolumes(old.Volumes, r.Volumes) {
			out = append(out, fmt.Sprintf("volume %s of %s would be at %s (was %s): the container is recreated and nothing is copied",
				v.Target, Ref(module, r.Name), v.Now, v.Was))
		}
	}
	return out
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
