package db

import (
	"cmp"
	"github.com/meshhq/hq/db/internal/dbsqlc"

	"context"
	"slices"

	"github.com/meshhq/hq"
)

// mesh is the part of the whole mesh a node's view depends on: where each stuck resource is
// stuck, and how many nodes have each module, for the scope of a stuck resource.
type mesh struct {
	stuckOn  map[string][]string // module/resource → nodes
	assigned map[string]int      // module → nodes
}

func loadMesh(ctx context.Context, q *dbsqlc.Queries) (mesh, error) {
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
	node        dbsqlc.Node
	counts      map[hq.State]int
	notApplied  []dbsqlc.ResourceState
	assignments []hq.AssignmentView
	last        *dbsqlc.Report
	refused     []dbsqlc.Send
	drifting    []hq.DriftCount
}

// view turns the parts into the operator's view, with status and lines.
func (s *Store) view(p nodeParts, m mesh) hq.NodeView {
	v := hq.NodeView{
		Name: p.node.Name, Generation: p.node.Generation, AppliedGeneration: p.node.AppliedGeneration,
		LastReportAt: nullTime(p.node.LastReportAt), Counts: map[hq.State]int{},
		Assignments: p.assignments, Holds: []hq.Hold{}, Stuck: []hq.StuckView{}, RefusedSends: []hq.RefusedSend{},
		Drifting: append([]hq.DriftCount{}, p.drifting...),
	}
	for _, st := range hq.States {
		v.Counts[st] = p.counts[st]
	}
	if p.last != nil {
		v.LastReport = reportView(*p.last)
	}
	f := hq.NodeFacts{Generation: v.Generation, AppliedGeneration: v.AppliedGeneration, LastReportAt: v.LastReportAt, Counts: v.Counts}
	blocks := map[string]int{}
	for _, r := range p.notApplied {
		if r.BlockedBy != "" {
			blocks[r.BlockedBy]++
		}
	}
	for _, r := range p.notApplied {
		ref := hq.Ref(r.Module, r.Resource)
		switch hq.State(r.State) {
		case hq.StateStuck:
			v.Stuck = append(v.Stuck, hq.StuckView{
				Module: r.Module, Resource: r.Resource, Attempts: r.ConsecutiveFailures,
				Since: hq.ParseTime(r.FailingSince.String), NeverApplied: r.NeverApplied == 1,
				Blocks: blocks[ref], Scope: m.scope(r.Module, r.Resource),
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
	v.Status, v.Lines = hq.ComputeStatus(f, s.Now(), s.SilentAfter)
	if v.Lines == nil {
		v.Lines = []string{}
	}
	return v
}

// GetNode returns one node's whole view, resources included.
func (s *Store) GetNode(ctx context.Context, name string) (hq.NodeView, error) {
	var v hq.NodeView
	err := s.inReadTx(ctx, func(q *dbsqlc.Queries) error {
		n, err := q.NodeGet(ctx, name)
		if err != nil {
			return nodeNotFound(ctx, q, err, name)
		}
		p := nodeParts{node: n, counts: map[hq.State]int{}}
		counts, err := q.ResourceStateCountsByNode(ctx, name)
		if err != nil {
			return err
		}
		for _, c := range counts {
			p.counts[hq.State(c.State)] = int(c.Count)
		}
		all, err := q.ResourceStateListByNode(ctx, name)
		if err != nil {
			return err
		}
		for _, r := range all {
			if r.State != string(hq.StateApplied) {
				p.notApplied = append(p.notApplied, r)
			}
		}
		if p.assignments, err = nodeAssignments(ctx, q, name); err != nil {
			return err
		}
		if last, ok, err := lastReport(ctx, q, n); err != nil {
			return err
		} else if ok {
			p.last = &last
		}
		if p.refused, err = q.SendListRefusedByNode(ctx, name); err != nil {
			return err
		}
		drifts, err := q.DriftCountsByNodeSince(ctx, dbsqlc.DriftCountsByNodeSinceParams{Node: name, Since: s.driftSince(), Threshold: int64(s.DriftThreshold)})
		if err != nil {
			return err
		}
		for _, d := range drifts {
			p.drifting = append(p.drifting, hq.DriftCount{Module: d.Module, Resource: d.Resource, Count: int(d.Drifts)})
		}
		m, err := loadMesh(ctx, q)
		if err != nil {
			return err
		}
		v = s.view(p, m)
		v.Resources = make([]hq.ResourceView, len(all))
		for i, r := range all {
			v.Resources[i] = resourceView(r)
		}
		return nil
	})
	return v, err
}

// ListNodes returns every node's view without its resources, from one snapshot and a fixed
// number of queries however many nodes there are.
func (s *Store) ListNodes(ctx context.Context) ([]hq.NodeView, error) {
	var out []hq.NodeView
	err := s.inReadTx(ctx, func(q *dbsqlc.Queries) error {
		nodes, err := q.NodeList(ctx)
		if err != nil {
			return err
		}
		parts := make(map[string]*nodeParts, len(nodes))
		for _, n := range nodes {
			parts[n.Name] = &nodeParts{node: n, counts: map[hq.State]int{}, assignments: []hq.AssignmentView{}}
		}
		counts, err := q.ResourceStateCounts(ctx)
		if err != nil {
			return err
		}
		for _, c := range counts {
			parts[c.Node].counts[hq.State(c.State)] = int(c.Count)
		}
		notApplied, err := q.ResourceStateListNotApplied(ctx)
		if err != nil {
			return err
		}
		for _, r := range notApplied {
			parts[r.Node].notApplied = append(parts[r.Node].notApplied, r)
		}
		assigned, err := q.AssignmentListAll(ctx)
		if err != nil {
			return err
		}
		for _, a := range assigned {
			parts[a.Node].assignments = append(parts[a.Node].assignments, hq.AssignmentView{Module: a.Module, Revision: a.Revision, Taken: a.Taken == 1})
		}
		latest, err := q.ReportListLatest(ctx)
		if err != nil {
			return err
		}
		for i := range latest {
			parts[latest[i].Node].last = &latest[i]
		}
		refused, err := q.SendListRefused(ctx)
		if err != nil {
			return err
		}
		for _, r := range refused {
			parts[r.Node].refused = append(parts[r.Node].refused, r)
		}
		drifts, err := q.DriftCountsSince(ctx, dbsqlc.DriftCountsSinceParams{Since: s.driftSince(), Threshold: int64(s.DriftThreshold)})
		if err != nil {
			return err
		}
		for _, d := range drifts {
			if p := parts[d.Node]; p != nil {
				p.drifting = append(p.drifting, hq.DriftCount{Module: d.Module, Resource: d.Resource, Count: int(d.Drifts)})
			}
		}
		m, err := loadMesh(ctx, q)
		if err != nil {
			return err
		}
		out = make([]hq.NodeView, 0, len(nodes))
		for _, n := range nodes {
			out = append(out, s.view(*parts[n.Name], m))
		}
		return nil
	})
	return out, err
}

func nodeAssignments(ctx context.Context, q *dbsqlc.Queries, node string) ([]hq.AssignmentView, error) {
	rows, err := q.AssignmentListByNode(ctx, node)
	out := make([]hq.AssignmentView, 0, len(rows))
	for _, a := range rows {
		out = append(out, hq.AssignmentView{Module: a.Module, Revision: a.Revision, Taken: a.Taken == 1})
	}
	return out, err
}

func resourceView(r dbsqlc.ResourceState) hq.ResourceView {
	return hq.ResourceView{
		Module: r.Module, Resource: r.Resource, Kind: r.Kind, State: hq.State(r.State), Since: hq.ParseTime(r.Since),
		Attempts: r.Attempts, ConsecutiveFailures: r.ConsecutiveFailures, NeverApplied: r.NeverApplied == 1,
		LastError: r.LastError, HoldReason: r.HoldReason, BlockedBy: r.BlockedBy, Group: r.GroupName,
	}
}

func reportView(r dbsqlc.Report) *hq.ReportView {
	return &hq.ReportView{ID: r.ID, Generation: r.Generation, Summary: r.Summary, StartedAt: nullTime(r.StartedAt),
		FinishedAt: nullTime(r.FinishedAt), At: hq.ParseTime(r.At), Repeats: r.Repeats, LastAt: hq.ParseTime(r.LastAt)}
}

func refusedView(r dbsqlc.Send, applied int64) hq.RefusedSend {
	return hq.RefusedSend{
		Node: r.Node, SendID: r.ID, Generation: r.Generation, AppliedGeneration: applied,
		ComposedBy: r.ComposedBy, At: hq.ParseTime(cmp.Or(r.OutcomeAt.String, r.SentAt)), Reason: r.Reason,
	}
}

// driftSince is where a node's drift lines start looking.
func (s *Store) driftSince() string { return hq.FormatTime(s.Now().Add(-hq.DriftWindow)) }
