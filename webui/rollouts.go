package webui

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// rolloutsPage is /rollouts: the rollouts, newest first, a page at a time, filtered by their
// state, module or placement.
type rolloutsPage struct {
	chrome
	Now       when
	Rollouts  []rolloutRow
	State     string
	States    []string
	Module    string
	Placement string
	Filtered  bool
	Next      string
}

type rolloutRow struct {
	ID        int64
	Module    string
	Placement string
	// From and To are the revisions of the diff link; Revisions says them as the line does.
	From, To  int64
	Revisions string
	State     badge
	Line      string
	Created   when
	Ended     when
}

func rolloutTone(s hq.RolloutState) tone {
	switch s {
	case hq.RolloutComplete:
		return toneGood
	case hq.RolloutPaused:
		return toneBad
	case hq.RolloutProgressing:
		return toneWait
	}
	return toneNeutral
}

func rolloutNodeTone(state string) tone {
	switch state {
	case hq.RolloutNodeDone:
		return toneGood
	case hq.RolloutNodeFailed:
		return toneBad
	case hq.RolloutNodeReverted:
		return toneWarn
	case hq.RolloutNodeInFlight:
		return toneWait
	}
	return toneNeutral
}

func rolloutRowOf(r hq.Rollout, now time.Time) rolloutRow {
	return rolloutRow{ID: r.ID, Module: r.Module, Placement: r.Placement, From: r.FromRevision, To: r.ToRevision, Revisions: r.Revisions(),
		State: badge{string(r.State), rolloutTone(r.State)}, Line: r.Line, Created: at(r.CreatedAt, now), Ended: notYet(r.EndedAt, now)}
}

var rolloutStates = func() []string {
	out := make([]string, len(hq.RolloutStates))
	for i, s := range hq.RolloutStates {
		out[i] = string(s)
	}
	return out
}()

func (u *UI) rollouts(w http.ResponseWriter, r *http.Request) {
	f := db.RolloutFilter{Limit: listSize}
	var err error
	if f.Before, err = readInt(r, "after"); err != nil {
		u.fail(w, r, err)
		return
	}
	state := r.URL.Query().Get("state")
	if state != "" && !slices.Contains(rolloutStates, state) {
		u.fail(w, r, hq.Errorf(hq.CodeBadRequest, "state must be one of %v", hq.RolloutStates))
		return
	}
	f.State = hq.RolloutState(state)
	if f.Module, err = readName(r, "module"); err == nil {
		f.Placement, err = readName(r, "placement")
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	list, err := u.store.PageRollouts(r.Context(), f)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	now := u.Now()
	p := rolloutsPage{chrome: chrome{Title: "rollouts", Refresh: refreshSeconds, Section: "rollouts"}, Now: at(now, now),
		State: state, States: rolloutStates, Module: f.Module, Placement: f.Placement,
		Filtered: state != "" || f.Module != "" || f.Placement != ""}
	for _, ro := range list.Rollouts {
		p.Rollouts = append(p.Rollouts, rolloutRowOf(ro, now))
	}
	if list.Next != 0 {
		p.Next = pageLink(r, "/rollouts", "after", strconv.FormatInt(list.Next, 10))
	}
	u.render(w, r, http.StatusOK, "rollouts", &p)
}

// rolloutPage is /rollouts/{id}: the rollout's line and policy, why it paused, its waves, its
// history, and its nodes a page at a time.
type rolloutPage struct {
	chrome
	Now       when
	ID        int64
	Module    string
	Placement string
	From, To  int64
	Revisions string
	State     badge
	Line      string
	// Paused is the reason the rollout paused, while it is paused.
	Paused     string
	Reason     string
	Policy     []fact
	Forgiven   int
	Created    when
	Updated    when
	Ended      when
	CanPause   bool
	CanResume  bool
	CanPromote bool
	CanAbort   bool
	Promoted   bool
	// SteeredBy and Steered are who last steered the rollout, and how ("paused", "rollback").
	SteeredBy, Steered string
	RollbackOf         int64
	Waves              []waveRow
	Transitions        []rolloutTransitionRow
	Filter             filterForm
	Nodes              []rolloutNodeRow
	Next               string
}

type fact struct{ Name, Value string }

// waveRow is one wave of a rollout: its nodes by their state in it. Wave 0 is the nodes the
// rollout has not reached, which the CLI calls waiting.
type waveRow struct {
	Name    string
	Nodes   int
	States  []stateCountWord
	Started when
	Ended   when
}

type stateCountWord struct {
	State badge
	Count int
}

type rolloutTransitionRow struct {
	At       when
	From, To badge
	Reason   string
}

type rolloutNodeRow struct {
	Node     string
	Wave     string
	State    badge
	From, To int64
	// Generation is the node's generation that first declared the new revision.
	Generation int64
	Status     badge
	Reason     string
	Started    when
	Ended      when
}

var rolloutNodeStates = []string{hq.RolloutNodePending, hq.RolloutNodeInFlight, hq.RolloutNodeDone, hq.RolloutNodeFailed, hq.RolloutNodeReverted}

func (u *UI) rollout(w http.ResponseWriter, r *http.Request) {
	id, err := rolloutID(r)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	path := rolloutPath(id)
	f, form, err := readNodeFilter(r, path, nodeListSize)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	nodeState := r.URL.Query().Get("state")
	if nodeState != "" && !slices.Contains(rolloutNodeStates, nodeState) {
		u.fail(w, r, hq.Errorf(hq.CodeBadRequest, "state must be one of %v", rolloutNodeStates))
		return
	}
	ctx := r.Context()
	ro, err := u.store.RolloutSummary(ctx, id)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	trs, err := u.store.RolloutTransitions(ctx, id)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	waves, err := u.store.RolloutWaves(ctx, id)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	form.Extra = []choice{{Label: "in the rollout", Name: "state", Value: nodeState, Options: rolloutNodeStates}}
	form.Active = form.Active || nodeState != ""
	var nodes db.NodePage
	progress := map[string]hq.RolloutNode{}
	if form.Active {
		// A filter reads every node of the rollout and of the fleet to find a page of those it
		// keeps.
		all, err := u.store.GetRollout(ctx, id)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		for _, n := range all.Progress {
			progress[n.Node] = n
		}
		f.Match = func(name string) bool {
			n, ok := progress[name]
			return ok && (nodeState == "" || n.State == nodeState)
		}
		if nodes, err = u.store.ListNodes(ctx, f); err != nil {
			u.fail(w, r, err)
			return
		}
	} else {
		// Unfiltered, a page reads its own nodes only, however many the rollout has.
		pg, err := u.store.PageRolloutNodes(ctx, id, f.After, nodeListSize)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		names := make([]string, len(pg.Nodes))
		for i, n := range pg.Nodes {
			progress[n.Node], names[i] = n, n.Node
		}
		if nodes.Nodes, err = u.store.NodesNamed(ctx, names); err != nil {
			u.fail(w, r, err)
			return
		}
		nodes.Next = pg.Next
	}
	now := u.Now()
	p := buildRollout(ro, trs, waves, now)
	p.Filter = form
	for _, v := range nodes.Nodes {
		n := progress[v.Name]
		row := rolloutNodeRow{Node: v.Name, Wave: waveName(n), State: badge{n.State, rolloutNodeTone(n.State)},
			From: n.FromRevision, To: ro.ToRevision, Generation: n.Generation,
			Status: badge{string(v.Status), statusTone(v.Status)}, Reason: n.Reason,
			Started: notYet(n.StartedAt, now), Ended: notYet(n.EndedAt, now)}
		p.Nodes = append(p.Nodes, row)
	}
	if nodes.Next != "" {
		p.Next = pageLink(r, path, "after", nodes.Next)
	}
	u.render(w, r, http.StatusOK, "rollout", &p)
}

// waveName is a node's wave as the CLI says it: "waiting" until its wave has started.
func waveName(n hq.RolloutNode) string {
	if n.StartedAt == nil {
		return "waiting"
	}
	return fmt.Sprintf("wave %d", n.Wave)
}

func buildRollout(ro hq.Rollout, trs []db.RolloutTransition, waves []db.RolloutWave, now time.Time) rolloutPage {
	p := rolloutPage{
		chrome: chrome{Title: fmt.Sprintf("rollout %d", ro.ID), Refresh: refreshSeconds, Section: "rollouts"},
		Now:    at(now, now), ID: ro.ID, Module: ro.Module, Placement: ro.Placement, From: ro.FromRevision, To: ro.ToRevision,
		Revisions: ro.Revisions(), State: badge{string(ro.State), rolloutTone(ro.State)}, Line: ro.Line, Reason: ro.Reason, Forgiven: ro.Forgiven,
		Created: at(ro.CreatedAt, now), Updated: at(ro.UpdatedAt, now), Ended: notYet(ro.EndedAt, now),
		CanPause:   ro.State == hq.RolloutProgressing,
		CanResume:  ro.State == hq.RolloutPaused,
		CanPromote: ro.State == hq.RolloutProgressing && ro.Policy.Canary > 0 && !ro.Promoted,
		CanAbort:   ro.State == hq.RolloutPaused || ro.State == hq.RolloutProgressing,
		Promoted:   ro.Promoted, RollbackOf: ro.RollbackOf, SteeredBy: ro.SteeredBy, Steered: ro.Steered,
	}
	if ro.State == hq.RolloutPaused {
		p.Paused = ro.Reason
	}
	pol := ro.Policy
	auto := "no"
	if pol.AutoRevert {
		auto = "yes: failed nodes are pinned back to the revision they had"
	}
	p.Policy = []fact{
		{"canary", fmt.Sprintf("%d node(s) first, alone", pol.Canary)},
		{"max_unavailable", amountText(pol.MaxUnavailable) + " node(s) in flight at once"},
		{"failure_budget", fmt.Sprintf("%d failed node(s) before the rollout pauses", pol.FailureBudget)},
		{"progress_deadline", pol.ProgressDeadline + " for a node to converge"},
		{"auto_revert", auto},
	}
	p.Waves = buildWaves(waves, now)
	for _, t := range trs {
		from := badge{string(t.From), rolloutTone(t.From)}
		if t.From == "" {
			from = badge{"(started)", toneNeutral}
		}
		p.Transitions = append(p.Transitions, rolloutTransitionRow{At: at(t.At, now), From: from,
			To: badge{string(t.To), rolloutTone(t.To)}, Reason: t.Reason})
	}
	return p
}

// amountText is a count of nodes or a percentage as the policy is written: 2, or "10%".
func amountText(a hq.Amount) string {
	if a.Percent {
		return fmt.Sprintf("%d%%", a.N)
	}
	return strconv.Itoa(a.N)
}

// buildWaves lays out a rollout's nodes counted by wave and state: the waves in order, then
// the nodes still waiting (wave 0).
func buildWaves(counts []db.RolloutWave, now time.Time) []waveRow {
	type acc struct {
		nodes          int
		states         map[string]int
		started, ended *time.Time
	}
	waves := map[int]*acc{}
	for _, c := range counts {
		a := waves[c.Wave]
		if a == nil {
			a = &acc{states: map[string]int{}}
			waves[c.Wave] = a
		}
		a.nodes += c.Nodes
		a.states[c.State] += c.Nodes
		if c.FirstStarted != nil && (a.started == nil || c.FirstStarted.Before(*a.started)) {
			a.started = c.FirstStarted
		}
		if c.LastEnded != nil && (a.ended == nil || c.LastEnded.After(*a.ended)) {
			a.ended = c.LastEnded
		}
	}
	order := slices.Sorted(func(yield func(int) bool) {
		for w := range waves {
			if w > 0 && !yield(w) {
				return
			}
		}
	})
	if _, ok := waves[0]; ok {
		order = append(order, 0)
	}
	var out []waveRow
	for _, w := range order {
		a := waves[w]
		row := waveRow{Name: "waiting", Nodes: a.nodes, Started: notYet(a.started, now), Ended: notYet(a.ended, now)}
		if w > 0 {
			row.Name = fmt.Sprintf("wave %d", w)
		}
		for _, s := range rolloutNodeStates {
			if c := a.states[s]; c > 0 {
				row.States = append(row.States, stateCountWord{State: badge{s, rolloutNodeTone(s)}, Count: c})
			}
		}
		out = append(out, row)
	}
	return out
}
