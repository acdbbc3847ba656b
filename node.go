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
}

// Hold is one resource the node refused to touch, with the node's own reason.
type Hold struct {
	Module   string `json:"module"`
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
}

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

// Scopes of a stuck resource.
const (
	ScopeNodeLocal = "node-local"
	ScopeMeshWide  = "mesh-wide"
)

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

// SendView is one delivery of a declaration.
type SendView struct {
	ID         int64     `json:"id"`
	Generation int64     `json:"generation"`
	Digest     string    `json:"digest"`
	Resources  int64     `json:"resources"`
	ComposedBy string    `json:"composed_by"`
	SentAt     time.Time `json:"sent_at"`
	Outcome    string    `json:"outcome"`
	Reason     string    `json:"reason,omitempty"`
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

// RefusedSend is a declaration a host would not apply.
type RefusedSend struct {
	Node              string    `json:"node"`
	SendID            int64     `json:"send_id"`
	Generation        int64     `json:"generation"`
	AppliedGeneration int64     `json:"applied_generation"`
	ComposedBy        string    `json:"composed_by"`
	At                time.Time `json:"at"`
	Reason            string    `json:"reason"`
}

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

// MeshStuck is one stuck resource, listed once however many nodes it is stuck on.
type MeshStuck struct {
	Module       string   `json:"module"`
	Resource     string   `json:"resource"`
	Scope        string   `json:"scope"`
	Nodes        []string `json:"nodes"`
	NeverApplied bool     `json:"never_applied"`
	Blocks       int      `json:"blocks"`
}

// WaitingOnTake is a module whose resources a node holds until it is taken.
type WaitingOnTake struct {
	Node   string `json:"node"`
	Module string `json:"module"`
	Held   int    `json:"held"`
}

// ModuleView is a module and its newest revision.
type ModuleView struct {
	Name      string     `json:"name"`
	Revision  int64      `json:"revision"`
	Digest    string     `json:"digest,omitempty"`
	Resources []Resource `json:"resources,omitempty"`
	Nodes     []string   `json:"nodes"`
	UpdatedAt time.Time  `json:"updated_at"`
}
