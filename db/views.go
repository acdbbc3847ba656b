package db

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/selector"
)

// mesh is the part of the whole mesh a node's view depends on: where each stuck resource is
// stuck, and how many nodes have each module, for the scope of a stuck resource.
type mesh struct {
	stuckOn  map[string][]string // module/resource → nodes
	assigned map[string]int      // module → nodes
}

func loadMesh(ctx context.Context, q driver.Queries) (mesh, error) {
	m := mesh{stuckOn: map[string][]string{}, assigned: map[string]int{}}
	stuck, err := q.ResourceStateListStuck(ctx)
	if err != nil {
		return m, err
	}
	for _, s := range stuck {
		ref := hq.Ref(s.Module, s.Resource)
		m.stuckOn[ref] = append(m.stuckOn[ref], s.Node)
	}
	counts, err := q.AssignmentCountByModule(ctx)
	for _, c := range counts {
		m.assigned[c.Module] = int(c.Nodes)
	}
	return m, err
}

func (m mesh) scope(module, resource string) string {
	return hq.StuckScope(len(m.stuckOn[hq.Ref(module, resource)]), m.assigned[module])
}

// nodeParts is what a node's view is made of, however it was loaded.
type nodeParts struct {
	node        driver.Node
	notFine     []driver.ResourceState
	blocks      map[string]int // gate (module/name) → resources it blocks
	assignments []hq.AssignmentView
	last        *driver.Report
	refused     []driver.Send
	drifting    []hq.DriftCount
}

// nodeCounts reads a node's resources by state from the counts its row keeps.
func nodeCounts(n driver.Node) map[hq.State]int {
	return statusCounts(statusRow(n))
}

// statusRow is the part of a node's row its status is computed from.
func statusRow(n driver.Node) driver.NodeStatusListRow {
	return driver.NodeStatusListRow{Name: n.Name, Generation: n.Generation, AppliedGeneration: n.AppliedGeneration,
		LastReportAt: n.LastReportAt, ResourcesApplied: n.ResourcesApplied, ResourcesPending: n.ResourcesPending,
		ResourcesFailed: n.ResourcesFailed, ResourcesStuck: n.ResourcesStuck, ResourcesHeld: n.ResourcesHeld,
		ResourcesGroupedPending: n.ResourcesGroupedPending, Labels: n.Labels}
}

// nodeStatus is a node's status at now from its row alone.
func (s *Store) nodeStatus(n driver.NodeStatusListRow, now time.Time) hq.Status {
	return hq.StatusOf(hq.NodeFacts{Generation: n.Generation, AppliedGeneration: n.AppliedGeneration,
		LastReportAt: nullTime(n.LastReportAt), Counts: statusCounts(n)}, now, s.opt.SilentAfter)
}

func statusCounts(n driver.NodeStatusListRow) map[hq.State]int {
	return map[hq.State]int{
		hq.StatePending: int(n.ResourcesPending), hq.StateApplied: int(n.ResourcesApplied),
		hq.StateFailed: int(n.ResourcesFailed), hq.StateStuck: int(n.ResourcesStuck),
		hq.StateHeld: int(n.ResourcesHeld), hq.StateGroupedPending: int(n.ResourcesGroupedPending),
	}
}

// view turns the parts into the operator's view, with status and lines.
func (s *Store) view(p nodeParts, m mesh) hq.NodeView {
	v := hq.NodeView{
		Name: p.node.Name, Labels: decodePairs(p.node.Labels), Vars: decodePairs(p.node.Vars), Generation: p.node.Generation, AppliedGeneration: p.node.AppliedGeneration,
		LastReportAt: nullTime(p.node.LastReportAt), Counts: nodeCounts(p.node),
		Assignments: p.assignments, Holds: []hq.Hold{}, Stuck: []hq.StuckView{}, RefusedSends: []hq.RefusedSend{},
		Drifting: append([]hq.DriftCount{}, p.drifting...),
	}
	if v.Assignments == nil {
		v.Assignments = []hq.AssignmentView{}
	}
	if n := p.node; n.HostdVersion != "" {
		h := &hq.HostFacts{HostdVersion: n.HostdVersion, OS: n.Os, Arch: n.Arch}
		if t := nullTime(n.BootedAt); t != nil {
			h.BootedAt = *t
		}
		v.Host = h
	}
	if p.last != nil {
		v.LastReport = reportView(*p.last)
	}
	f := hq.NodeFacts{Generation: v.Generation, AppliedGeneration: v.AppliedGeneration, LastReportAt: v.LastReportAt, Counts: v.Counts}
	for _, r := range p.notFine {
		ref := hq.Ref(r.Module, r.Resource)
		switch hq.State(r.State) {
		case hq.StateStuck:
			v.Stuck = append(v.Stuck, hq.StuckView{
				Module: r.Module, Resource: r.Resource, Attempts: r.ConsecutiveFailures,
				Since: hq.ParseTime(r.FailingSince.String), NeverApplied: r.NeverApplied,
				Blocks: p.blocks[ref], Scope: m.scope(r.Module, r.Resource),
			})
		case hq.StateHeld:
			v.Holds = append(v.Holds, hq.Hold{Module: r.Module, Resource: r.Resource, Reason: r.HoldReason})
		case hq.StateFailed:
			f.Failed = append(f.Failed, ref)
		case hq.StateGroupedPending:
			if g := hq.Ref(r.Module, r.GroupName); r.GroupName != "" && !slices.Contains(f.WaitingGroups, g) {
				f.WaitingGroups = append(f.WaitingGroups, g)
			}
		}
	}
	f.Stuck, f.Held = v.Stuck, hq.CountHolds(v.Holds)
	for _, r := range p.refused {
		v.RefusedSends = append(v.RefusedSends, refusedView(r, p.node.AppliedGeneration))
	}
	f.Refused, f.Drifting = v.RefusedSends, v.Drifting
	v.Status, v.Lines = hq.ComputeStatus(f, s.clock(), s.opt.SilentAfter)
	if v.Lines == nil {
		v.Lines = []string{}
	}
	return v
}

// views builds the views of some nodes (without their resources) from one snapshot, with one
// query per kind of detail for all of them rather than one per node.
func (s *Store) views(ctx context.Context, q driver.Queries, nodes []driver.Node) ([]hq.NodeView, error) {
	if len(nodes) == 0 {
		return []hq.NodeView{}, nil
	}
	parts := make(map[string]*nodeParts, len(nodes))
	names := make([]string, len(nodes))
	for i, n := range nodes {
		parts[n.Name] = &nodeParts{node: n, blocks: map[string]int{}}
		names[i] = n.Name
	}
	notFine, err := q.ResourceStateListNotFineByNodes(ctx, names)
	if err != nil {
		return nil, err
	}
	for _, r := range notFine {
		parts[r.Node].notFine = append(parts[r.Node].notFine, r)
	}
	blocked, err := q.ResourceStateBlockedCountsByNodes(ctx, names)
	if err != nil {
		return nil, err
	}
	for _, b := range blocked {
		parts[b.Node].blocks[b.BlockedBy] = int(b.Blocks)
	}
	assigned, err := q.AssignmentListByNodes(ctx, names)
	if err != nil {
		return nil, err
	}
	for _, a := range assigned {
		parts[a.Node].assignments = append(parts[a.Node].assignments, hq.AssignmentView{Module: a.Module, Revision: a.Revision,
			Taken: a.Taken, Source: a.Source, AssignedAt: hq.ParseTime(a.AssignedAt), AssignedBy: a.AssignedBy, TakenBy: a.TakenBy})
	}
	latest, err := q.ReportListLatestByNodes(ctx, names)
	if err != nil {
		return nil, err
	}
	for i := range latest {
		parts[latest[i].Node].last = &latest[i]
	}
	refused, err := q.SendListRefusedByNodes(ctx, names)
	if err != nil {
		return nil, err
	}
	for _, r := range refused {
		parts[r.Node].refused = append(parts[r.Node].refused, r)
	}
	drifts, err := q.DriftCountsByNodesSince(ctx, driver.DriftCountsByNodesSinceParams{Nodes: names, Since: s.driftSince(), Threshold: int64(s.opt.DriftThreshold)})
	if err != nil {
		return nil, err
	}
	for _, d := range drifts {
		parts[d.Node].drifting = append(parts[d.Node].drifting, hq.DriftCount{Module: d.Module, Resource: d.Resource, Count: int(d.Drifts)})
	}
	// The scope of a stuck resource needs the whole mesh's stuck rows and module counts: read
	// only when one of these nodes has something stuck, not for every node page.
	var m mesh
	for _, r := range notFine {
		if r.State == string(hq.StateStuck) {
			if m, err = loadMesh(ctx, q); err != nil {
				return nil, err
			}
			break
		}
	}
	out := make([]hq.NodeView, len(nodes))
	for i, n := range nodes {
		out[i] = s.view(*parts[n.Name], m)
	}
	return out, nil
}

// GetNode returns one node's whole view, resources included.
func (s *Store) GetNode(ctx context.Context, name string) (hq.NodeView, error) {
	var v hq.NodeView
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		n, err := q.NodeGet(ctx, name)
		if err != nil {
			return nodeNotFound(ctx, q, err, name)
		}
		vs, err := s.views(ctx, q, []driver.Node{n})
		if err != nil {
			return err
		}
		v = vs[0]
		all, err := q.ResourceStateListByNode(ctx, name)
		if err != nil {
			return err
		}
		v.Resources = make([]hq.ResourceView, len(all))
		for i, r := range all {
			v.Resources[i] = resourceView(r)
		}
		if err := addContainers(ctx, q, name, v.Resources); err != nil {
			return err
		}
		if err := addHeldFound(ctx, q, name, v.Holds); err != nil {
			return err
		}
		if v.Rollouts, err = nodeRollouts(ctx, q, name); err != nil {
			return err
		}
		for _, r := range v.Rollouts {
			v.Lines = append(v.Lines, r.Line())
		}
		return nil
	})
	return v, err
}

// NodeFilter picks and pages the nodes a listing returns.
type NodeFilter struct {
	// Status, when set, keeps only nodes in it; NotConverged keeps every node that needs a look.
	Status       hq.Status
	NotConverged bool
	// Match, when set, keeps only the nodes it returns true for.
	Match func(name string) bool
	// Selector, when set, keeps only the nodes whose labels it matches.
	Selector *selector.Selector
	// BySeverity lists the nodes by how much each needs a look (hq.BySeverity), then by name,
	// rather than by name alone; its cursor is SeverityCursor's.
	BySeverity bool
	// After is the cursor: the name of the last node of the page before (by severity, its
	// status and name). Limit bounds the page (0 means every node).
	After string
	Limit int
	// Uncounted spares a listing by status its count of the fleet, for a caller that has the
	// counts from MeshStatus: Counts and Total are left empty. A listing by name or labels
	// counts anyway, as it reads every node's row.
	Uncounted bool
}

// NodePage is one page of a node listing, with the status counts of the nodes it picks from.
type NodePage struct {
	Nodes []hq.NodeView
	// Next is the cursor of the next page; empty on the last.
	Next string
	// Counts is by status every node the selector and Match keep (every node of the mesh
	// without them), whatever the status filter keeps of those: the totals the listing is a
	// part of (see NodeFilter.Uncounted).
	Counts map[hq.Status]int
	Total  int
}

// ListNodes returns the nodes the filter keeps, in name order (or by severity), from one
// snapshot, and only the nodes on the page are looked at further. A listing by status (the
// mesh page's) is counted and picked in the database; one by name or labels reads every
// node's status row.
func (s *Store) ListNodes(ctx context.Context, f NodeFilter) (NodePage, error) {
	page := NodePage{Nodes: []hq.NodeView{}, Counts: map[hq.Status]int{}}
	var cur severityCursor
	if f.BySeverity {
		var err error
		if cur, err = parseSeverityCursor(f.After); err != nil {
			return page, err
		}
	}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		var keep []string
		var err error
		switch {
		case f.Match != nil || f.Selector != nil:
			keep, err = s.pickByRow(ctx, q, f, cur, &page)
		case f.BySeverity:
			keep, err = s.pickBySeverity(ctx, q, f, cur, &page)
		default:
			keep, err = s.pickByStatus(ctx, q, f, &page)
		}
		if err != nil || len(keep) == 0 {
			return err
		}
		rows, err := q.NodeListByNames(ctx, keep)
		if err != nil {
			return err
		}
		views, err := s.views(ctx, q, rows)
		page.Nodes = inOrder(views, keep)
		return err
	})
	return page, err
}

// inOrder puts views, which come by name, in the order of names.
func inOrder(views []hq.NodeView, names []string) []hq.NodeView {
	at := make(map[string]int, len(names))
	for i, n := range names {
		at[n] = i
	}
	slices.SortStableFunc(views, func(a, b hq.NodeView) int { return cmp.Compare(at[a.Name], at[b.Name]) })
	return views
}

// severityCursor is where a page by severity ended: the last node's severity and name. The
// zero value's severity is -1, before every node.
type severityCursor struct {
	severity int
	name     string
}

// SeverityCursor is the cursor of a listing by severity after node name in status st: the
// status and the name, as "degraded:web-7" (a name has no colon).
func SeverityCursor(st hq.Status, name string) string { return string(st) + ":" + name }

func parseSeverityCursor(after string) (severityCursor, error) {
	if after == "" {
		return severityCursor{severity: -1}, nil
	}
	st, name, ok := strings.Cut(after, ":")
	if !ok || !slices.Contains(hq.Statuses, hq.Status(st)) || !hq.ValidName(name) {
		return severityCursor{}, hq.Errorf(hq.CodeBadRequest, "cursor %q is not a status and a node's name, as status:name", after)
	}
	return severityCursor{severity: hq.Severity(hq.Status(st)), name: name}, nil
}

// before reports whether a node of severity sev named name comes at or before the cursor.
func (c severityCursor) before(sev int, name string) bool {
	return sev < c.severity || sev == c.severity && name <= c.name
}

// pickByStatus counts the nodes by status and names the page's in the database, which at
// 50,000 nodes costs half of reading every node's row into the controller, and the names
// alone a fortieth.
func (s *Store) pickByStatus(ctx context.Context, q driver.Queries, f NodeFilter, page *NodePage) ([]string, error) {
	silent, err := s.countFleet(ctx, q, f, page)
	if err != nil {
		return nil, err
	}
	names, err := q.NodeNamesByStatus(ctx, driver.NodeNamesByStatusParams{SilentBefore: silent, After: f.After,
		Status: string(f.Status), NotConverged: f.NotConverged, Max: most(f.Limit)})
	if err != nil {
		return nil, err
	}
	if f.Limit > 0 && len(names) > f.Limit {
		names = names[:f.Limit]
		page.Next = names[f.Limit-1]
	}
	return names, nil
}

// pickBySeverity is pickByStatus by severity: the database ranks and sorts the nodes, so
// the most severe come first on the first page however many nodes rank below them.
func (s *Store) pickBySeverity(ctx context.Context, q driver.Queries, f NodeFilter, cur severityCursor, page *NodePage) ([]string, error) {
	silent, err := s.countFleet(ctx, q, f, page)
	if err != nil {
		return nil, err
	}
	rows, err := q.NodeNamesBySeverity(ctx, driver.NodeNamesBySeverityParams{SilentBefore: silent, Status: string(f.Status),
		NotConverged: f.NotConverged, AfterSeverity: int64(cur.severity), After: cur.name, Max: most(f.Limit)})
	if err != nil {
		return nil, err
	}
	if f.Limit > 0 && len(rows) > f.Limit {
		rows = rows[:f.Limit]
		last := rows[f.Limit-1]
		page.Next = SeverityCursor(hq.Status(last.Status), last.Name)
	}
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Name
	}
	return names, nil
}

// countFleet counts the fleet into page unless the filter says not to, and returns the time
// a report must be older than for its node to be silent, for the picking that follows.
func (s *Store) countFleet(ctx context.Context, q driver.Queries, f NodeFilter, page *NodePage) (string, error) {
	silent := s.silentBefore()
	if !f.Uncounted {
		fl, err := fleetCounts(ctx, q, silent)
		if err != nil {
			return "", err
		}
		page.Counts, page.Total = fl.nodes, fl.total
	}
	return silent, nil
}

// most is a page's LIMIT: one more than the page says whether there is a next page.
func most(limit int) int64 {
	if limit > 0 {
		return int64(limit) + 1
	}
	return math.MaxInt64
}

// pickByRow reads every node's status row and keeps what the filter keeps, counting the
// nodes the selector and Match keep.
func (s *Store) pickByRow(ctx context.Context, q driver.Queries, f NodeFilter, cur severityCursor, page *NodePage) ([]string, error) {
	nodes, err := q.NodeStatusList(ctx)
	if err != nil {
		return nil, err
	}
	type picked struct {
		name string
		st   hq.Status
	}
	var keep []picked
	now := s.clock() // one instant for the whole listing, as the counting in the database has
	for _, n := range nodes {
		if f.Match != nil && !f.Match(n.Name) || f.Selector != nil && !f.Selector.Matches(decodePairs(n.Labels)) {
			continue
		}
		st := s.nodeStatus(n, now)
		page.Counts[st]++
		page.Total++
		if f.Status != "" && st != f.Status || f.NotConverged && st == hq.StatusConverged {
			continue
		}
		keep = append(keep, picked{n.Name, st})
	}
	if f.BySeverity {
		// The rows come by name; a stable sort keeps that order within a severity.
		slices.SortStableFunc(keep, func(a, b picked) int { return cmp.Compare(hq.Severity(a.st), hq.Severity(b.st)) })
	}
	var names []string
	for i, p := range keep {
		switch {
		case f.BySeverity && cur.before(hq.Severity(p.st), p.name), !f.BySeverity && f.After != "" && p.name <= f.After:
			continue
		}
		if f.Limit > 0 && len(names) == f.Limit {
			page.Next = keep[i-1].name
			if f.BySeverity {
				page.Next = SeverityCursor(keep[i-1].st, keep[i-1].name)
			}
			break
		}
		names = append(names, p.name)
	}
	return names, nil
}

func resourceView(r driver.ResourceState) hq.ResourceView {
	return hq.ResourceView{
		Module: r.Module, Resource: r.Resource, Kind: r.Kind, State: hq.State(r.State), Since: hq.ParseTime(r.Since),
		Attempts: r.Attempts, ConsecutiveFailures: r.ConsecutiveFailures, NeverApplied: r.NeverApplied,
		LastError: currentError(r), HoldReason: r.HoldReason, BlockedBy: r.BlockedBy, Group: r.GroupName,
	}
}

// currentError is the row's last error when it is why the resource is in its state now:
// failed, stuck or grouped-pending. A row another state left it on (an operator's retry makes
// it pending; a row written before held and pending cleared it) keeps it in the database, but
// the page, the CLI and the API, which all read it here, do not show it beside a state that
// has another reason.
func currentError(r driver.ResourceState) string {
	switch hq.State(r.State) {
	case hq.StateFailed, hq.StateStuck, hq.StateGroupedPending:
		return r.LastError
	}
	return ""
}

func reportView(r driver.Report) *hq.ReportView {
	return &hq.ReportView{ID: r.ID, Generation: r.Generation, Summary: r.Summary, StartedAt: nullTime(r.StartedAt),
		FinishedAt: nullTime(r.FinishedAt), At: hq.ParseTime(r.At), Repeats: r.Repeats, LastAt: hq.ParseTime(r.LastAt)}
}

func refusedView(r driver.Send, applied int64) hq.RefusedSend {
	return hq.RefusedSend{
		Node: r.Node, SendID: r.ID, Generation: r.Generation, AppliedGeneration: applied,
		ComposedBy: r.ComposedBy, At: hq.ParseTime(cmp.Or(r.OutcomeAt.String, r.SentAt)), Reason: r.Reason,
	}
}

// driftSince is where a node's drift lines start looking.
func (s *Store) driftSince() string { return hq.FormatTime(s.clock().Add(-hq.DriftWindow)) }
