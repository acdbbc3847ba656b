// Package rollout decides how a rollout moves on. It owns the rules (the canaries go first and
// alone, a wave is as wide as the policy lets it be, failures beyond the budget pause it, every
// node done completes it) and nothing else: the store counts the rollout's nodes, asks Next,
// and persists what it answers.
package rollout

import (
	"fmt"
	"strings"

	"github.com/meshhq/hq"
)

// Counts is where a rollout's nodes stand.
type Counts struct {
	Nodes, Pending, InFlight, Done, Failed int
	// Forgiven is how many failures an operator resumed past: they no longer count against
	// the budget.
	Forgiven int
	// FirstWaveInFlight is how many of the first wave's nodes are still in flight.
	FirstWaveInFlight int
	// LastWave is the newest wave started, 0 before any.
	LastWave int
	// Promoted is set once an operator took the canaries as proven: the batches need not wait
	// for them.
	Promoted bool
}

// Action is what a step of a rollout does.
type Action int

const (
	// Wait: nothing to start now; nodes in flight have yet to converge or fail.
	Wait Action = iota
	// Pause: more nodes failed than the budget allows.
	Pause
	// Complete: no node is pending or in flight.
	Complete
	// Advance: start up to Start pending nodes as wave Wave.
	Advance
)

// Step is what a rollout does next.
type Step struct {
	Action Action
	// Reason says why it completes ("every node done"); a pause's reason is what failed where,
	// which the store words from the failed nodes (Failures).
	Reason string
	// Start is how many pending nodes to start, at most; Wave is the wave they make.
	Start, Wave int
}

// Next is the step a progressing rollout under policy p takes from counts c.
func Next(p hq.RolloutPolicy, c Counts) Step {
	if c.Failed-c.Forgiven > p.FailureBudget {
		return Step{Action: Pause}
	}
	if c.Pending == 0 && c.InFlight == 0 {
		reason := "every node done"
		if c.Failed > 0 {
			reason = fmt.Sprintf("every node done but %d failed within the budget", c.Failed)
		}
		return Step{Action: Complete, Reason: reason}
	}
	if c.Pending == 0 || p.Canary > 0 && c.FirstWaveInFlight > 0 && !c.Promoted {
		return Step{Action: Wait} // the canaries first, alone
	}
	wave := c.LastWave + 1
	n := p.WaveSize(c.Nodes, wave) - c.InFlight
	if n <= 0 {
		return Step{Action: Wait}
	}
	return Step{Action: Advance, Start: n, Wave: wave}
}

// Failed is a node that failed its rollout, and why ("app/conf stuck; …").
type Failed struct {
	Node, Reason string
}

// namedNodes is how many nodes a group of Failures names before it counts the rest.
const namedNodes = 5

// Failures says what failed where, grouped by what failed, each group where its first node
// comes in the order given: "app/conf stuck on web-7, web-9; app/svc failed on web-2". A
// reason's first clause (before "; ") is what groups it. Every failed node is named, up to
// namedNodes a group: "app/conf failed on 12 nodes: w1, w2, w3, w4, w5 and 7 more".
func Failures(failed []Failed) string {
	var order []string
	groups := map[string][]string{}
	for _, f := range failed {
		why := firstClause(f.Reason)
		if _, ok := groups[why]; !ok {
			order = append(order, why)
		}
		groups[why] = append(groups[why], f.Node)
	}
	parts := make([]string, len(order))
	for i, why := range order {
		nodes := groups[why]
		if len(nodes) <= namedNodes {
			parts[i] = why + " on " + strings.Join(nodes, ", ")
			continue
		}
		parts[i] = fmt.Sprintf("%s on %d nodes: %s and %d more", why, len(nodes), strings.Join(nodes[:namedNodes], ", "), len(nodes)-namedNodes)
	}
	return strings.Join(parts, "; ")
}

func firstClause(reason string) string { return strings.SplitN(reason, "; ", 2)[0] }
