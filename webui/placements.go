package webui

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/selector"
)

// placementsPage is /placements: every placement a page at a time, with how many nodes it
// matches and the rollout it runs.
type placementsPage struct {
	chrome
	Now        when
	Placements []placementRow
	Next       string
}

type placementRow struct {
	Name     string
	Module   string
	Selector string
	// SelectorLink is the mesh filtered by the selector.
	SelectorLink string
	Taken        bool
	Matched      int
	Assigned     int
	Policy       string
	// Rollout is the placement's newest rollout, if it had one.
	Rollout *rolloutRow
}

// policyLine says a rollout policy in one line, with the API's field names.
func policyLine(p *hq.RolloutPolicy) string {
	if p == nil {
		return "every node at once"
	}
	line := fmt.Sprintf("canary %d, max_unavailable %s, failure_budget %d, progress_deadline %s", p.Canary,
		amountText(p.MaxUnavailable), p.FailureBudget, p.ProgressDeadline)
	if p.AutoRevert {
		line += ", auto_revert"
	}
	return line
}

func placementRowOf(p hq.Placement) placementRow {
	return placementRow{Name: p.Name, Module: p.Module, Selector: p.Selector, SelectorLink: selectorLink(p.Selector),
		Taken: p.Taken, Matched: p.Matched, Assigned: p.Assigned, Policy: policyLine(p.Rollout)}
}

func (u *UI) placements(w http.ResponseWriter, r *http.Request) {
	after, err := readName(r, "after")
	if err != nil {
		u.fail(w, r, err)
		return
	}
	ctx := r.Context()
	list, err := u.store.PagePlacements(ctx, after, listSize)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	names := make([]string, len(list.Placements))
	for i, pl := range list.Placements {
		names[i] = pl.Name
	}
	latest, err := u.store.LatestRollouts(ctx, names)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	now := u.Now()
	p := placementsPage{chrome: chrome{Title: "placements", Refresh: refreshSeconds, Section: "placements"}, Now: at(now, now)}
	for _, pl := range list.Placements {
		row := placementRowOf(pl)
		if ro, ok := latest[pl.Name]; ok {
			rr := rolloutRowOf(ro, now)
			row.Rollout = &rr
		}
		p.Placements = append(p.Placements, row)
	}
	if list.Next != "" {
		p.Next = pageLink(r, "/placements", "after", list.Next)
	}
	u.render(w, r, http.StatusOK, "placements", &p)
}

// placementRollouts is how many of a placement's rollouts its page lists; /rollouts lists
// the rest.
const placementRollouts = 10

// placementPage is /placements/{name}: the placement, its rollouts, and the nodes its selector
// matches a page at a time, each with where its module comes from.
type placementPage struct {
	chrome
	Now          when
	Placement    placementRow
	Created      when
	Updated      when
	Rollouts     []rolloutRow
	MoreRollouts string
	// RollbackTo fills the rollback form: the revision the newest rollout moved the nodes from.
	RollbackTo int64
	Filter     filterForm
	Nodes      []placedNodeRow
	Next       string
}

type placedNodeRow struct {
	Name   string
	Status badge
	// Revision is the revision the node's assignment pins; Source says who assigned the module,
	// where the node has it.
	Revision int64
	Source   string
	Placed   bool
	Lines    []string
}

func (u *UI) placement(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "placement")
	if !hq.ValidName(name) {
		u.fail(w, r, hq.NameError("placement", name))
		return
	}
	path := "/placements/" + name
	f, form, err := readNodeFilter(r, path, nodeListSize)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	ctx := r.Context()
	text, err := u.store.PlacementSelector(ctx, name)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	sel, err := selector.Parse(text)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	// Every term must hold, so the placement's and the filter's selectors together are one.
	if f.Selector != nil {
		sel.Terms = append(sel.Terms, f.Selector.Terms...)
	}
	f.Selector = &sel
	// Counting the placement's nodes and listing a page of them each read the fleet, on a
	// connection of its own: at once, the page waits for the longer.
	type summary struct {
		pl  hq.Placement
		err error
	}
	counted := make(chan summary, 1)
	go func() {
		pl, err := u.store.PlacementSummary(ctx, name)
		counted <- summary{pl, err}
	}()
	nodes, err := u.store.ListNodes(ctx, f)
	var ros db.RolloutPage
	if err == nil {
		ros, err = u.store.PageRollouts(ctx, db.RolloutFilter{Placement: name, Limit: placementRollouts})
	}
	sum := <-counted
	if err == nil {
		err = sum.err
	}
	if err != nil {
		u.fail(w, r, err)
		return
	}
	pl := sum.pl
	now := u.Now()
	p := placementPage{chrome: chrome{Title: "placement " + name, Refresh: refreshSeconds, Section: "placements"},
		Now: at(now, now), Placement: placementRowOf(pl), Created: at(pl.CreatedAt, now), Updated: at(pl.UpdatedAt, now),
		Filter: form}
	for _, ro := range ros.Rollouts {
		p.Rollouts = append(p.Rollouts, rolloutRowOf(ro, now))
	}
	if len(ros.Rollouts) > 0 {
		p.RollbackTo = ros.Rollouts[0].FromRevision
	}
	if ros.Next != 0 {
		p.MoreRollouts = "/rollouts?placement=" + name
	}
	p.Nodes = placedNodes(nodes.Nodes, pl.Module, name)
	if nodes.Next != "" {
		p.Next = pageLink(r, path, "after", nodes.Next)
	}
	u.render(w, r, http.StatusOK, "placement", &p)
}

// placedNodes are nodes as a list of a module's nodes shows them: their status and where
// the module on them comes from. placement, when set, is the placement the list is of.
func placedNodes(views []hq.NodeView, module, placement string) []placedNodeRow {
	var out []placedNodeRow
	for _, v := range views {
		row := placedNodeRow{Name: v.Name, Status: badge{string(v.Status), statusTone(v.Status)}, Lines: v.Lines}
		for _, a := range v.Assignments {
			if a.Module == module {
				row.Revision, row.Source = a.Revision, a.Source
				row.Placed = placement != "" && a.Source == placement
			}
		}
		out = append(out, row)
	}
	return out
}
