package hq

import "time"

// NodeView is everything the operator reads about one node.
type NodeView struct {
	Name              string            `json:"name"`
	Labels            map[string]string `json:"labels"`
	Vars              map[string]string `json:"vars"`
	Status            Status            `json:"status"`
	Lines             []string          `json:"lines"`
	Generation        int64             `json:"generation"`
	AppliedGeneration int64             `json:"applied_generation"`
	LastReportAt      *time.Time        `json:"last_report_at"`
	// Host is what the node's hostd said of the host, once it has (GET /nodes/{node} only).
	Host         *HostFacts       `json:"host,omitempty"`
	Counts       map[State]int    `json:"counts"`
	LastReport   *ReportView      `json:"last_report"`
	Assignments  []AssignmentView `json:"assignments"`
	Holds        []Hold           `json:"holds"`
	Stuck        []StuckView      `json:"stuck"`
	RefusedSends []RefusedSend    `json:"refused_sends"`
	// Drifting lists the resources put back repeatedly within the last hour.
	Drifting []DriftCount `json:"drifting"`
	// Rollouts are the unfinished rollouts the node is in (GET /nodes/{node} only).
	Rollouts  []NodeRollout  `json:"rollouts,omitempty"`
	Resources []ResourceView `json:"resources,omitempty"`
}

// AssignmentView is one module on a node.
type AssignmentView struct {
	Module   string `json:"module"`
	Revision int64  `json:"revision"`
	Taken    bool   `json:"taken"`
	// Source is who assigned it: "operator", or the placement's name.
	Source string `json:"source"`
	// AssignedAt is when it was assigned. AssignedBy is the operator who assigned it, and
	// TakenBy the one who took it (when it was taken is not kept): "" for a placement's
	// assignment, one not taken, and one from before operators had names.
	AssignedAt time.Time `json:"assigned_at"`
	AssignedBy string    `json:"assigned_by,omitempty"`
	TakenBy    string    `json:"taken_by,omitempty"`
}

// ResourceView is where one resource stands on one node.
type ResourceView struct {
	Module              string    `json:"module"`
	Resource            string    `json:"resource"`
	Kind                string    `json:"kind"`
	State               State     `json:"state"`
	Since               time.Time `json:"since"`
	Attempts            int64     `json:"attempts"`
	ConsecutiveFailures int64     `json:"consecutive_failures"`
	NeverApplied        bool      `json:"never_applied"`
	LastError           string    `json:"last_error"`
	HoldReason          string    `json:"hold_reason"`
	BlockedBy           string    `json:"blocked_by"`
	Group               string    `json:"group"`
	// Container is what runs for a container resource, as its hostd last reported it; nil
	// for other kinds, and before hostd has said.
	Container *ContainerStatus `json:"container,omitempty"`
}

// ReportView is one row of a node's report history.
type ReportView struct {
	ID         int64      `json:"id"`
	Generation int64      `json:"generation"`
	Summary    string     `json:"summary"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	At         time.Time  `json:"at"`
	Repeats    int64      `json:"repeats"`
	LastAt     time.Time  `json:"last_at"`
}

// TransitionView is one change of a resource's state.
type TransitionView struct {
	Module   string    `json:"module"`
	Resource string    `json:"resource"`
	From     string    `json:"from"`
	To       string    `json:"to"`
	At       time.Time `json:"at"`
	ReportID *int64    `json:"report_id,omitempty"`
	Reason   string    `json:"reason"`
}
