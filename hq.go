// Package hq holds the words every part of hq speaks: the resource states and node statuses,
// coded errors, the resource spec and its rules, the declaration and the report, the views the
// operator reads, placements and rollouts. Parsers and algorithms live in packages named for
// them; those the words need (keys, paths, tmpl, debversion) import nothing of this package,
// and the rest of the module is not imported here, so the controller and hostd can share it.
package hq

// State is where one resource stands on one node, as the controller records it.
type State string

// The resource lifecycle. Hosts report every state but Stuck; only the controller decides that.
const (
	StatePending        State = "pending"
	StateApplied        State = "applied"
	StateFailed         State = "failed"
	StateStuck          State = "stuck"
	StateHeld           State = "held"
	StateGroupedPending State = "grouped-pending"
)

// States lists every state in the order counts are shown.
var States = []State{StateApplied, StateFailed, StateStuck, StateHeld, StateGroupedPending, StatePending}

// Outcome reports whether s is something a host may report.
func (s State) Outcome() bool {
	switch s {
	case StatePending, StateApplied, StateFailed, StateHeld, StateGroupedPending:
		return true
	}
	return false
}

// Status is a node's one-word condition; see ComputeStatus for the order they are chosen in.
type Status string

const (
	StatusNew           Status = "new"
	StatusSilent        Status = "silent"
	StatusStuck         Status = "stuck"
	StatusWaitingOnTake Status = "waiting-on-take"
	StatusMidChange     Status = "mid-change"
	StatusDegraded      Status = "degraded"
	StatusConverged     Status = "converged"
)

// Statuses lists every node status in order of precedence.
var Statuses = []Status{StatusNew, StatusSilent, StatusStuck, StatusWaitingOnTake, StatusMidChange, StatusDegraded, StatusConverged}

// BySeverity lists every node status by how much a node in it needs a look, most first: the
// order the mesh page lists nodes in. It is not the order of precedence: a node that stopped
// reporting or waits on a take has said what it is, while one that is stuck, failing or partway
// through a change is where an operator is needed first. The queries that sort by it in the
// database (NodeNamesBySeverity) spell the same order.
var BySeverity = []Status{StatusStuck, StatusDegraded, StatusMidChange, StatusSilent, StatusWaitingOnTake, StatusNew, StatusConverged}

// Severity is s's place in BySeverity, 0 the most severe; an unknown status sorts last.
func Severity(s Status) int {
	for i, x := range BySeverity {
		if x == s {
			return i
		}
	}
	return len(BySeverity)
}
