package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// meshPage is everything / shows, worked out in Go so the template only lays it out.
type meshPage struct {
	chrome
	Now when
	// Alerts are the controller's own troubles (it cannot write), shown above everything.
	Alerts []string
	Total  int
	// Converged nodes are counted, not listed unless the filter asks for them; Next is the link
	// to the next page of the list.
	Converged int
	Next      string
	Filter    filterForm
	// Listed is the filter in words, when the list is filtered.
	Listed string
	// Selected is the heading of a mesh filtered by a selector: the nodes it matches, counted;
	// AllConverged, when every one of them is converged and none is listed, links to them all.
	Selected     string
	AllConverged string
	Counts       []statusCount
	History      historyChart
	Groups       []nodeGroup
	Stuck        []meshStuckRow
	Waiting      []hq.WaitingOnTake
	// Drifting is what is put back most often across the mesh.
	Drifting []hq.MeshDrift
	Mid      []nodeLines
	Refused  []refusedRow
	// Rollouts are the unfinished rollouts, each by its line; a paused one is a warning, with
	// why it paused, under PausedBadge.
	Rollouts    []hq.Rollout
	PausedBadge badge
	// Polls is how this controller's hosts learn of a change, when it is known.
	Polls *polls
}

// polls counts the hosts that hold a long-poll here and those that poll on their interval.
type polls struct {
	Waiting, Polling int
}

type statusCount struct {
	Status badge
	Count  int
	Link   string
}

// nodeGroup is the nodes of one status, by name as the store lists them; groups come by
// severity, the most in need of a look first, as the store lists them.
type nodeGroup struct {
	Status badge
	// Count is how many nodes of the status the mesh (or its selector) has, on this page or
	// another.
	Count int
	Nodes []nodeRow
}

type nodeRow struct {
	Name              string
	Status            badge
	Generation        int64
	AppliedGeneration int64
	// Behind is set when the node has not applied the generation it was sent.
	Behind     bool
	LastReport when
	Summary    string
	Lines      []string
}

type meshStuckRow struct {
	Ref          string
	Scope        badge
	Nodes        []string
	NeverApplied bool
	Blocks       int
}

type nodeLines struct {
	Name  string
	Lines []string
}

type refusedRow struct {
	Node              string
	Generation        int64
	AppliedGeneration int64
	ComposedBy        string
	At                when
	Reason            string
}

// meshNodes is how many nodes that need a look one mesh page lists; the rest are a page on.
const meshNodes = 200

// statusAll is the mesh's status filter for every node, converged or not: the mesh lists the
// nodes that need a look when no status is given.
const statusAll = "all"

func (u *UI) mesh(w http.ResponseWriter, r *http.Request) {
	f, form, err := readNodeFilter(r, "/", meshNodes)
	code := http.StatusOK
	if err != nil {
		if hq.ErrorCode(err).HTTPStatus() == http.StatusInternalServerError {
			u.fail(w, r, err)
			return
		}
		// A bad filter is said beside the form, on the mesh as it is without one: the operator
		// mends it where it was typed.
		form.Error, code = errMessage(err), http.StatusBadRequest
		f = db.NodeFilter{Limit: meshNodes}
	}
	ctx := r.Context()
	now := u.Now()
	// The chart reads the reports and the rest the nodes, each on a connection of its own: at
	// once, the page waits for the longer of the two instead of both.
	type chart struct {
		points []db.ConvergedAt
		err    error
	}
	charted := make(chan chart, 1)
	go func() {
		points, err := u.convergedHistory(ctx, now)
		charted <- chart{points, err}
	}()
	st, err := u.store.MeshStatusOf(ctx, f.Selector)
	var nodes db.NodePage
	if err == nil && form.Error == "" {
		nodes, err = u.store.ListNodes(ctx, meshFilter(f, form.Status == statusAll))
	}
	history := <-charted
	if err == nil {
		err = history.err
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	page := buildMesh(nodes, st, now)
	page.History = buildHistory(history.points)
	form.Default = "needs a look"
	form.Statuses = append([]string{statusAll}, form.Statuses...)
	page.Filter, page.Listed = form, filterWords(form)
	if f.Selector != nil {
		page.Selected = selectedWords(form.Selector, st.Nodes)
		if form.Status == "" && st.Nodes["total"] > 0 && st.Nodes["total"] == st.Nodes[string(hq.StatusConverged)] {
			page.AllConverged = "/?" + url.Values{"selector": {form.Selector}, "status": {statusAll}}.Encode()
		}
	}
	if nodes.Next != "" {
		page.Next = pageLink(r, "/", "after", nodes.Next)
	}
	if t, ok := u.store.Trouble(); ok {
		page.Alerts = append(page.Alerts, t.Line())
	}
	if u.Polls != nil {
		page.Polls = new(polls)
		page.Polls.Waiting, page.Polls.Polling = u.Polls()
	}
	u.render(w, r, code, "mesh", &page)
}

// meshFilter picks a page of the nodes the filter keeps, the most in need of a look first:
// without a status, those that need a look (all but the converged), unless all asks for every
// node. The mesh's status has counted the nodes already, so the listing does not count them
// again.
func meshFilter(f db.NodeFilter, all bool) db.NodeFilter {
	if f.Status == "" && !all {
		f.NotConverged = true
	}
	f.Uncounted, f.BySeverity = true, true
	if f.Limit == 0 {
		f.Limit = meshNodes
	}
	return f
}

// selectedWords is the heading of a mesh filtered by a selector, of the nodes it matches:
// "role=web: 4 node(s), all converged", "role=web: 5 node(s): 1 degraded, 4 converged".
func selectedWords(sel string, counts map[string]int) string {
	total := counts["total"]
	line := fmt.Sprintf("%s: %d node(s)", sel, total)
	switch {
	case total == 0:
		return line + ", none registered"
	case counts[string(hq.StatusConverged)] == total:
		return line + ", all converged"
	}
	var parts []string
	for _, s := range hq.BySeverity {
		if n := counts[string(s)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return line + ": " + strings.Join(parts, ", ")
}

// filterWords says what a filtered list shows, as the query says it.
func filterWords(f filterForm) string {
	if !f.Active {
		return ""
	}
	var parts []string
	if f.Status != "" {
		parts = append(parts, "status "+f.Status)
	}
	if f.Selector != "" {
		parts = append(parts, "selector "+f.Selector)
	}
	return strings.Join(parts, ", ")
}

// buildMesh lays out the mesh: every status counted, and the nodes that need a look listed by
// status, a page at a time.
func buildMesh(nodes db.NodePage, st hq.MeshStatus, now time.Time) meshPage {
	count := func(s hq.Status) int { return st.Nodes[string(s)] }
	p := meshPage{chrome: chrome{Title: "mesh", Refresh: refreshSeconds, Section: "mesh"}, Now: at(now, now), Total: st.Nodes["total"],
		Converged: count(hq.StatusConverged)}
	byStatus := map[hq.Status][]nodeRow{}
	for _, n := range nodes.Nodes {
		row := nodeRow{
			Name: n.Name, Status: badge{string(n.Status), statusTone(n.Status)},
			Generation: n.Generation, AppliedGeneration: n.AppliedGeneration,
			Behind:     n.LastReportAt != nil && n.Generation != n.AppliedGeneration,
			LastReport: atPtr(n.LastReportAt, now), Lines: n.Lines,
		}
		if n.LastReport != nil {
			row.Summary = n.LastReport.Summary
		}
		byStatus[n.Status] = append(byStatus[n.Status], row)
		if n.Status == hq.StatusMidChange {
			p.Mid = append(p.Mid, nodeLines{Name: n.Name, Lines: n.Lines})
		}
	}
	for _, s := range hq.BySeverity {
		b := badge{string(s), statusTone(s)}
		p.Counts = append(p.Counts, statusCount{Status: b, Count: count(s), Link: "/?status=" + string(s)})
		if rows := byStatus[s]; len(rows) > 0 {
			p.Groups = append(p.Groups, nodeGroup{Status: b, Count: count(s), Nodes: rows})
		}
	}
	for _, s := range st.Stuck {
		p.Stuck = append(p.Stuck, meshStuckRow{
			Ref: hq.Ref(s.Module, s.Resource), Scope: badge{s.Scope, scopeTone(s.Scope)},
			Nodes: s.Nodes, NeverApplied: s.NeverApplied, Blocks: s.Blocks,
		})
	}
	p.Waiting, p.Drifting, p.Rollouts = st.WaitingOnTake, st.Drifting, st.Rollouts
	p.PausedBadge = badge{string(hq.RolloutPaused), toneWarn}
	for _, rs := range st.RefusedSends {
		p.Refused = append(p.Refused, refusedRow{
			Node: rs.Node, Generation: rs.Generation, AppliedGeneration: rs.AppliedGeneration,
			ComposedBy: rs.ComposedBy, At: at(rs.At, now), Reason: rs.Reason,
		})
	}
	return p
}
