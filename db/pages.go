package db

import (
	"context"
	"fmt"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/selector"
)

// The reads below serve the operator's pages: each lists a page at a time, keyed by where the
// page before ended, so a fleet's worth of rows is never read to show a screenful.

// RolloutFilter picks and pages a listing of rollouts, newest first. An empty field keeps every
// rollout.
type RolloutFilter struct {
	State     hq.RolloutState
	Module    string
	Placement string
	// Before is the cursor: the id of the last rollout of the page before; 0 for the first.
	Before int64
	Limit  int
}

// RolloutPage is one page of rollouts, newest first, without their nodes.
type RolloutPage struct {
	Rollouts []hq.Rollout
	// Next is the cursor of the next page; 0 on the last.
	Next int64
}

// PageRollouts returns one page of the rollouts the filter keeps.
func (s *Store) PageRollouts(ctx context.Context, f RolloutFilter) (RolloutPage, error) {
	rows, err := s.reader().RolloutListPage(ctx, driver.RolloutListPageParams{Before: f.Before, State: string(f.State),
		Module: f.Module, Placement: f.Placement, Max: int64(f.Limit) + 1})
	if err != nil {
		return RolloutPage{}, err
	}
	var p RolloutPage
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		p.Next = rows[f.Limit-1].ID
	}
	p.Rollouts = make([]hq.Rollout, len(rows))
	for i, r := range rows {
		p.Rollouts[i] = rolloutView(r)
	}
	return p, nil
}

// RolloutTransition is one change of a rollout's state; From is empty where the rollout began.
type RolloutTransition struct {
	From, To hq.RolloutState
	Reason   string
	At       time.Time
}

// maxRolloutTransitions bounds a rollout's history as a page shows it; a rollout changes state
// a handful of times, each pause and resume an operator's act.
const maxRolloutTransitions = 500

// RolloutTransitions returns a rollout's history, oldest first.
func (s *Store) RolloutTransitions(ctx context.Context, id int64) ([]RolloutTransition, error) {
	rows, err := s.reader().RolloutTransitionList(ctx, driver.RolloutTransitionListParams{Rollout: id, Max: maxRolloutTransitions})
	out := make([]RolloutTransition, len(rows))
	for i, r := range rows {
		out[i] = RolloutTransition{From: hq.RolloutState(r.FromState), To: hq.RolloutState(r.ToState), Reason: r.Reason, At: hq.ParseTime(r.At)}
	}
	return out, err
}

// RolloutSummary returns a rollout without its nodes; not_found when there is none.
func (s *Store) RolloutSummary(ctx context.Context, id int64) (hq.Rollout, error) {
	r, err := s.reader().RolloutGet(ctx, id)
	if err != nil {
		return hq.Rollout{}, notFound(err, "no rollout %d", id)
	}
	return readRollout(r)
}

// RolloutNodePage is one page of a rollout's nodes by name, each with its progress.
type RolloutNodePage struct {
	Nodes []hq.RolloutNode
	// Next is the cursor of the next page: the last name on this one; empty on the last.
	Next string
}

// PageRolloutNodes returns a rollout's nodes after the name after, at most limit of them: a
// page reads its own rows, not the rollout's every node.
func (s *Store) PageRolloutNodes(ctx context.Context, id int64, after string, limit int) (RolloutNodePage, error) {
	rows, err := s.reader().RolloutNodePage(ctx, driver.RolloutNodePageParams{Rollout: id, After: after, Max: int64(limit) + 1})
	if err != nil {
		return RolloutNodePage{}, err
	}
	var p RolloutNodePage
	if len(rows) > limit {
		rows = rows[:limit]
		p.Next = rows[limit-1].Node
	}
	p.Nodes = make([]hq.RolloutNode, len(rows))
	for i, n := range rows {
		p.Nodes[i] = hq.RolloutNode{Node: n.Node, Wave: int(n.Wave), State: n.State, FromRevision: n.FromRevision,
			Generation: n.Generation, Reason: n.Reason, StartedAt: nullTime(n.StartedAt), EndedAt: nullTime(n.EndedAt)}
	}
	return p, nil
}

// RolloutWave is how many of a rollout's nodes are in one state in one wave, and when the
// first of them started and the last ended. Wave 0 is the nodes not started yet.
type RolloutWave struct {
	Wave         int
	State        string
	Nodes        int
	FirstStarted *time.Time
	LastEnded    *time.Time
}

// RolloutWaves counts a rollout's nodes by wave and state in the database, by wave then state.
func (s *Store) RolloutWaves(ctx context.Context, id int64) ([]RolloutWave, error) {
	rows, err := s.reader().RolloutWaveList(ctx, id)
	out := make([]RolloutWave, len(rows))
	for i, r := range rows {
		out[i] = RolloutWave{Wave: int(r.Wave), State: r.State, Nodes: int(r.Nodes)}
		if r.FirstStarted != "" {
			t := hq.ParseTime(r.FirstStarted)
			out[i].FirstStarted = &t
		}
		if r.LastEnded != "" {
			t := hq.ParseTime(r.LastEnded)
			out[i].LastEnded = &t
		}
	}
	return out, err
}

// NodesNamed returns the views of the nodes named that are registered, by name, as a listing
// shows them (without their resources).
func (s *Store) NodesNamed(ctx context.Context, names []string) ([]hq.NodeView, error) {
	out := []hq.NodeView{}
	if len(names) == 0 {
		return out, nil
	}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		rows, err := q.NodeListByNames(ctx, names)
		if err != nil {
			return err
		}
		out, err = s.views(ctx, q, rows)
		return err
	})
	return out, err
}

// LatestRollouts returns the newest rollout of each placement named that has had one, by
// placement.
func (s *Store) LatestRollouts(ctx context.Context, placements []string) (map[string]hq.Rollout, error) {
	out := map[string]hq.Rollout{}
	if len(placements) == 0 {
		return out, nil
	}
	rows, err := s.reader().RolloutLatestOfPlacements(ctx, placements)
	for _, r := range rows {
		out[r.Placement] = rolloutView(r)
	}
	return out, err
}

// PlacementPage is one page of placements by name, each with its counts of nodes.
type PlacementPage struct {
	Placements []hq.Placement
	// Next is the cursor of the next page: the last name on this one; empty on the last.
	Next string
}

// PagePlacements returns the placements after the name after, at most limit of them.
func (s *Store) PagePlacements(ctx context.Context, after string, limit int) (PlacementPage, error) {
	p := PlacementPage{Placements: []hq.Placement{}}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		rows, err := q.PlacementListPage(ctx, driver.PlacementListPageParams{After: after, Max: int64(limit) + 1})
		if err != nil || len(rows) == 0 {
			return err
		}
		if len(rows) > limit {
			rows = rows[:limit]
			p.Next = rows[limit-1].Name
		}
		p.Placements, err = placementViews(ctx, q, rows)
		return err
	})
	return p, err
}

// PlacementsOfModule returns the placements that place module, by name.
func (s *Store) PlacementsOfModule(ctx context.Context, module string) ([]hq.Placement, error) {
	out := []hq.Placement{}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		rows, err := q.PlacementListByModule(ctx, module)
		if err != nil || len(rows) == 0 {
			return err
		}
		out, err = placementViews(ctx, q, rows)
		return err
	})
	return out, err
}

// PlacementSummary returns a placement as PagePlacements lists it; not_found when there is
// none.
func (s *Store) PlacementSummary(ctx context.Context, name string) (hq.Placement, error) {
	var out hq.Placement
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		p, err := q.PlacementGet(ctx, name)
		if err != nil {
			return notFound(err, "no placement %s", name)
		}
		views, err := placementViews(ctx, q, []driver.Placement{p})
		if err == nil {
			out = views[0]
		}
		return err
	})
	return out, err
}

// PlacementSelector returns a placement's selector as stored, without counting its nodes;
// not_found when there is no such placement.
func (s *Store) PlacementSelector(ctx context.Context, name string) (string, error) {
	p, err := s.reader().PlacementGet(ctx, name)
	if err != nil {
		return "", notFound(err, "no placement %s", name)
	}
	return p.Selector, nil
}

// placementViews counts the nodes each placement matches against every node's labels, read
// and decoded once for all of them, and those it assigned in the database: a page of
// placements costs one pass over the fleet, not one a placement. The counts are those
// GetPlacement gives.
func placementViews(ctx context.Context, q driver.Queries, rows []driver.Placement) ([]hq.Placement, error) {
	nodes, err := q.NodeLabelList(ctx)
	if err != nil {
		return nil, err
	}
	labels := make([]map[string]string, len(nodes))
	for i, n := range nodes {
		labels[i] = decodePairs(n.Labels)
	}
	out := make([]hq.Placement, len(rows))
	for i, p := range rows {
		sel, err := selector.ParseStored(p.Selector)
		if err != nil {
			return nil, fmt.Errorf("placement %s: %w", p.Name, err)
		}
		matched := 0
		for _, l := range labels {
			if sel.Matches(l) {
				matched++
			}
		}
		assigned, err := q.AssignmentCountBySource(ctx, driver.AssignmentCountBySourceParams{Source: p.Name, Module: p.Module})
		if err != nil {
			return nil, err
		}
		v := hq.Placement{Name: p.Name, Module: p.Module, Selector: p.Selector, Taken: p.Taken,
			Matched: matched, Assigned: int(assigned), CreatedAt: hq.ParseTime(p.CreatedAt), UpdatedAt: hq.ParseTime(p.UpdatedAt)}
		if p.Rollout != "" {
			pol, err := rolloutPolicy(p.Rollout)
			if err != nil {
				return nil, fmt.Errorf("placement %s: %w", p.Name, err)
			}
			v.Rollout = &pol
		}
		out[i] = v
	}
	return out, nil
}

// ModuleSummary is a module as a listing shows it: its newest revision, and how many nodes
// have it and how many placements place it.
type ModuleSummary struct {
	Name       string
	Revision   int64
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Nodes      int
	Placements int
}

// ModulePage is one page of modules by name.
type ModulePage struct {
	Modules []ModuleSummary
	// Next is the cursor of the next page: the last name on this one; empty on the last.
	Next string
}

// PageModules returns the modules after the name after, at most limit of them.
func (s *Store) PageModules(ctx context.Context, after string, limit int) (ModulePage, error) {
	rows, err := s.reader().ModuleOverviewList(ctx, driver.ModuleOverviewListParams{After: after, Max: int64(limit) + 1})
	if err != nil {
		return ModulePage{}, err
	}
	p := ModulePage{Modules: make([]ModuleSummary, 0, len(rows))}
	if len(rows) > limit {
		rows = rows[:limit]
		p.Next = rows[limit-1].Name
	}
	for _, r := range rows {
		p.Modules = append(p.Modules, moduleSummary(driver.ModuleOverviewGetRow(r)))
	}
	return p, nil
}

// GetModuleSummary returns one module as PageModules lists it; not_found when there is none.
func (s *Store) GetModuleSummary(ctx context.Context, name string) (ModuleSummary, error) {
	r, err := s.reader().ModuleOverviewGet(ctx, name)
	if err != nil {
		return ModuleSummary{}, notFound(err, "no module %s", name)
	}
	return moduleSummary(r), nil
}

func moduleSummary(r driver.ModuleOverviewGetRow) ModuleSummary {
	return ModuleSummary{Name: r.Name, Revision: r.Revision, CreatedAt: hq.ParseTime(r.CreatedAt),
		UpdatedAt: hq.ParseTime(r.UpdatedAt), Nodes: int(r.Nodes), Placements: int(r.Placements)}
}

// AssignedNodes names the nodes a module is assigned to, by name.
func (s *Store) AssignedNodes(ctx context.Context, module string) ([]string, error) {
	return assignedNodes(ctx, s.reader(), module)
}

// RevisionSummary is one revision of a module without its resources.
type RevisionSummary struct {
	Revision  int64
	Resources int
	Digest    string
	CreatedAt time.Time
	// PushedBy is the operator who pushed it ("" before operators), Message what they said of it.
	PushedBy string
	Message  string
}

// RevisionPage is one page of a module's revisions, newest first.
type RevisionPage struct {
	Revisions []RevisionSummary
	// Next is the cursor of the next page: the last revision on this one; 0 on the last.
	Next int64
}

// PageRevisions returns a module's revisions older than before (0: from the newest), at most
// limit of them.
func (s *Store) PageRevisions(ctx context.Context, module string, before int64, limit int) (RevisionPage, error) {
	rows, err := s.reader().ModuleRevisionListPage(ctx, driver.ModuleRevisionListPageParams{Module: module, Before: before, Max: int64(limit) + 1})
	if err != nil {
		return RevisionPage{}, err
	}
	p := RevisionPage{Revisions: make([]RevisionSummary, 0, len(rows))}
	if len(rows) > limit {
		rows = rows[:limit]
		p.Next = rows[limit-1].Revision
	}
	for _, r := range rows {
		p.Revisions = append(p.Revisions, RevisionSummary{Revision: r.Revision, Resources: int(r.ResourceCount),
			Digest: r.Digest, CreatedAt: hq.ParseTime(r.CreatedAt), PushedBy: r.PushedBy, Message: r.Message})
	}
	return p, nil
}

// Revision is one revision of a module with its resources, as uploaded.
type Revision struct {
	Module    string
	Revision  int64
	Digest    string
	CreatedAt time.Time
	PushedBy  string
	Message   string
	Resources []hq.Resource
}

// GetRevision returns one revision of a module; not_found when there is no such revision.
func (s *Store) GetRevision(ctx context.Context, module string, revision int64) (Revision, error) {
	r, err := s.reader().ModuleRevisionGet(ctx, driver.ModuleRevisionGetParams{Module: module, Revision: revision})
	if err != nil {
		return Revision{}, notFound(err, "no revision %d of module %s", revision, module)
	}
	// Decoded here rather than through the store's cache of revisions, which the writer keeps
	// for what it declares: a page may read any revision, however old.
	rs, err := decodeResources(r.Resources)
	if err != nil {
		return Revision{}, err
	}
	return Revision{Module: module, Revision: revision, Digest: r.Digest, CreatedAt: hq.ParseTime(r.CreatedAt),
		PushedBy: r.PushedBy, Message: r.Message, Resources: rs}, nil
}

// ReportOutcome is one row of a node's report history with the counts its line was made from.
type ReportOutcome struct {
	hq.ReportView
	Applied, Failed, Stuck, Held, GroupedPending, Pending int
}

// ReportOutcomes lists a node's distinct reports, newest first, with their counts.
func (s *Store) ReportOutcomes(ctx context.Context, node string, limit int64) ([]ReportOutcome, error) {
	rows, err := listForNode(ctx, s, node, func(q driver.Queries) ([]driver.Report, error) {
		return q.ReportListByNode(ctx, driver.ReportListByNodeParams{Node: node, Max: limit})
	})
	out := make([]ReportOutcome, len(rows))
	for i, r := range rows {
		out[i] = ReportOutcome{ReportView: *reportView(r), Applied: int(r.Applied), Failed: int(r.Failed), Stuck: int(r.Stuck),
			Held: int(r.Held), GroupedPending: int(r.GroupedPending), Pending: int(r.Pending)}
	}
	return out, err
}
