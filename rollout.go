package hq

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RolloutState is where a rollout is in its lifecycle.
type RolloutState string

const (
	RolloutProgressing RolloutState = "progressing"
	RolloutPaused      RolloutState = "paused"
	RolloutComplete    RolloutState = "complete"
	RolloutAborted     RolloutState = "aborted"
)

// RolloutStates lists every rollout state.
var RolloutStates = []RolloutState{RolloutProgressing, RolloutPaused, RolloutComplete, RolloutAborted}

// Rollout node states: pending until advanced, in-flight while declared the new revision and
// not yet converged on it, then done or failed; reverted once pinned back.
const (
	RolloutNodePending  = "pending"
	RolloutNodeInFlight = "in-flight"
	RolloutNodeDone     = "done"
	RolloutNodeFailed   = "failed"
	RolloutNodeReverted = "reverted"
)

// Amount is a count of nodes or a percentage of them ("10%").
type Amount struct {
	N       int
	Percent bool
}

// Of is the amount out of total nodes: a percentage rounds down, and is at least 1.
func (a Amount) Of(total int) int {
	if !a.Percent {
		return a.N
	}
	return max(1, total*a.N/100)
}

func (a Amount) MarshalJSON() ([]byte, error) {
	if a.Percent {
		return json.Marshal(strconv.Itoa(a.N) + "%")
	}
	return json.Marshal(a.N)
}

func (a *Amount) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(b, []byte(`"`)) {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
		if err != nil || !strings.HasSuffix(s, "%") {
			return fmt.Errorf("want a number of nodes or a percentage like \"10%%\", not %q", s)
		}
		*a = Amount{N: n, Percent: true}
		return nil
	}
	return json.Unmarshal(b, &a.N)
}

// RolloutPolicy is how a new revision of a placed module reaches the placement's nodes.
type RolloutPolicy struct {
	// Canary nodes go first, alone; the batches follow once every canary is done.
	Canary int `json:"canary"`
	// MaxUnavailable bounds the nodes in flight at once (declared the new revision, not yet
	// converged on it). Default 1.
	MaxUnavailable Amount `json:"max_unavailable"`
	// FailureBudget is how many nodes may fail before the rollout pauses.
	FailureBudget int `json:"failure_budget"`
	// ProgressDeadline is how long a node has to converge before it counts as failed.
	// Default 10m.
	ProgressDeadline string `json:"progress_deadline"`
	// AutoRevert pins failed nodes back to the revision they had.
	AutoRevert bool `json:"auto_revert"`
}

// WaveSize is how many of a rollout's total nodes its wave (counted from 1) declares the new
// revision to, with nothing in flight: the canaries first, then MaxUnavailable at a time.
func (p RolloutPolicy) WaveSize(total, wave int) int {
	if wave == 1 && p.Canary > 0 {
		return p.Canary
	}
	return p.MaxUnavailable.Of(total)
}

// Waves splits nodes, in the order a rollout takes them, into the waves it would run if every
// node converged: what a plan shows before the rollout starts. Failures and the deadline may
// pause the real one.
func (p RolloutPolicy) Waves(nodes []string) [][]string {
	var waves [][]string
	for rest := nodes; len(rest) > 0; {
		n := min(len(rest), max(1, p.WaveSize(len(nodes), len(waves)+1)))
		waves = append(waves, rest[:n:n])
		rest = rest[n:]
	}
	return waves
}

// DefaultProgressDeadline is a node's time to converge when the policy names none.
const DefaultProgressDeadline = 10 * time.Minute

// Deadline is the progress deadline as a duration.
func (p RolloutPolicy) Deadline() time.Duration {
	d, err := time.ParseDuration(p.ProgressDeadline)
	if err != nil || d <= 0 {
		return DefaultProgressDeadline
	}
	return d
}

// Normalize fills the defaults and checks the policy; an invalid *Error names the field.
func (p *RolloutPolicy) Normalize() error {
	if p.MaxUnavailable.N == 0 && !p.MaxUnavailable.Percent {
		p.MaxUnavailable.N = 1
	}
	if p.ProgressDeadline == "" {
		p.ProgressDeadline = DefaultProgressDeadline.String()
	}
	bad := func(field, format string, args ...any) error {
		e := Errorf(CodeInvalid, "invalid rollout policy: %s: %s", field, fmt.Sprintf(format, args...))
		e.Details = []FieldError{{Field: "rollout." + field, Message: fmt.Sprintf(format, args...)}}
		return e
	}
	switch {
	case p.Canary < 0:
		return bad("canary", "%d is negative", p.Canary)
	case p.FailureBudget < 0:
		return bad("failure_budget", "%d is negative", p.FailureBudget)
	case p.MaxUnavailable.N < 1 || p.MaxUnavailable.Percent && p.MaxUnavailable.N > 100:
		return bad("max_unavailable", "want at least 1 node, or a percentage from 1%% to 100%%")
	}
	if d, err := time.ParseDuration(p.ProgressDeadline); err != nil || d <= 0 {
		return bad("progress_deadline", "%q is not a positive duration like \"10m\"", p.ProgressDeadline)
	}
	return nil
}

// Rollout is one rollout, with its per-node progress when read alone.
type Rollout struct {
	ID        int64  `json:"id"`
	Module    string `json:"module"`
	Placement string `json:"placement"`
	// FromRevision is the lowest revision its nodes moved from; FromRevisions every one of
	// them, lowest first (after a superseded rollout, nodes may move from several).
	FromRevision  int64         `json:"from_revision"`
	FromRevisions []int64       `json:"from_revisions"`
	ToRevision    int64         `json:"to_revision"`
	State         RolloutState  `json:"state"`
	Policy        RolloutPolicy `json:"policy"`
	// Promoted is set once an operator promoted the rollout: its canaries count as proven.
	Promoted bool `json:"promoted"`
	// RollbackOf is, for a rollback of the placement to an earlier revision, the module's
	// newest revision when it started; 0 for the rollout of a new revision.
	RollbackOf int64 `json:"rollback_of,omitempty"`
	// SteeredBy is the operator who last paused, resumed, promoted or aborted the rollout,
	// or started it by a rollback; Steered says which ("paused", …, "rollback").
	SteeredBy string `json:"steered_by,omitempty"`
	Steered   string `json:"steered,omitempty"`
	Nodes     int    `json:"nodes"`
	Done      int    `json:"done"`
	InFlight  int    `json:"in_flight"`
	// Failed counts the failed nodes, reverted or not; Forgiven those a resume set aside.
	Failed    int           `json:"failed"`
	Forgiven  int           `json:"forgiven"`
	Reason    string        `json:"reason"`
	Line      string        `json:"line"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
	EndedAt   *time.Time    `json:"ended_at,omitempty"`
	Progress  []RolloutNode `json:"progress,omitempty"`
}

// RolloutNode is one node's progress in a rollout.
type RolloutNode struct {
	Node         string     `json:"node"`
	Wave         int        `json:"wave"`
	State        string     `json:"state"`
	FromRevision int64      `json:"from_revision"`
	Generation   int64      `json:"generation"`
	Reason       string     `json:"reason"`
	StartedAt    *time.Time `json:"started_at,omitempty"`
	EndedAt      *time.Time `json:"ended_at,omitempty"`
}

// NodeRollout says which unfinished rollout a node is in and how far it is.
type NodeRollout struct {
	ID           int64        `json:"id"`
	Module       string       `json:"module"`
	FromRevision int64        `json:"from_revision"`
	ToRevision   int64        `json:"to_revision"`
	State        RolloutState `json:"state"`
	NodeState    string       `json:"node_state"`
	Wave         int          `json:"wave"`
	Reason       string       `json:"reason"`
}

// Revisions is where the rollout moves its nodes from and to, "r3→r4", or "r2,r3→r4" when its
// nodes move from several revisions.
func (r Rollout) Revisions() string {
	from := "r" + strconv.FormatInt(r.FromRevision, 10)
	if len(r.FromRevisions) > 1 {
		parts := make([]string, len(r.FromRevisions))
		for i, f := range r.FromRevisions {
			parts[i] = "r" + strconv.FormatInt(f, 10)
		}
		from = strings.Join(parts, ",")
	}
	return fmt.Sprintf("%s→r%d", from, r.ToRevision)
}

// MakeLine is the rollout's line, the same in /status and on the page:
// rollout app r3→r4: 40 of 120 node(s) done, 3 in flight, 2 failed (budget 1): paused: app/config stuck on web-7, web-9
func (r Rollout) MakeLine() string {
	s := fmt.Sprintf("rollout %s %s: %d of %d node(s) done, %d in flight, %d failed (budget %d): %s",
		r.Module, r.Revisions(), r.Done, r.Nodes, r.InFlight, r.Failed, r.Policy.FailureBudget, r.State)
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// Line is the node's rollout as a line of its own.
func (r NodeRollout) Line() string {
	s := fmt.Sprintf("rollout %d of %s r%d→r%d (%s): this node %s", r.ID, r.Module, r.FromRevision, r.ToRevision, r.State, r.NodeState)
	if r.Wave > 0 {
		s += fmt.Sprintf(" in wave %d", r.Wave)
	}
	if r.Reason != "" && r.Reason != "converged" {
		s += ": " + r.Reason
	}
	return s
}
