package db

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/selector"
)

// MeshStatus summarises every node from one snapshot: counts by status (counted in the
// database from each node's row), each stuck resource once with its scope, what waits on a
// take, refused sends, what drifts most, and the controller's own trouble writing, if any. Its
// cost grows with the nodes and with what is not fine, not with every resource of the fleet.
func (s *Store) MeshStatus(ctx context.Context) (hq.MeshStatus, error) {
	return s.MeshStatusOf(ctx, nil)
}

// MeshStatusOf is MeshStatus of the nodes sel matches (every node when nil): their counts, what
// is stuck, held, refused and drifting on them. A stuck resource's scope is still the mesh's
// (stuck on every node of its module or on a few), and the rollouts are the mesh's, a
// rollout being a placement's. Matching reads every node's status row, as a listing by
// selector does.
func (s *Store) MeshStatusOf(ctx context.Context, sel *selector.Selector) (hq.MeshStatus, error) {
	st := hq.NewMeshStatus()
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		on, err := s.meshCounts(ctx, q, sel, &st)
		if err != nil {
			return err
		}
		if err := meshStuck(ctx, q, on, &st); err != nil {
			return err
		}
		held, err := q.ResourceStateListHeld(ctx)
		if err != nil {
			return err
		}
		counts := map[string]hq.HeldCounts{}
		var order []string
		for _, h := range held {
			if !on.has(h.Node) {
				continue
			}
			if counts[h.Node] == nil {
				counts[h.Node] = hq.HeldCounts{}
				order = append(order, h.Node)
			}
			counts[h.Node][h.Module]++
		}
		for _, node := range order {
			for _, m := range counts[node].Modules() {
				st.WaitingOnTake = append(st.WaitingOnTake, hq.WaitingOnTake{Node: node, Module: m, Held: counts[node][m]})
			}
		}
		refused, err := q.SendListRefused(ctx)
		if err != nil {
			return err
		}
		refused = slices.DeleteFunc(refused, func(r driver.Send) bool { return !on.has(r.Node) })
		applied, err := appliedGenerations(ctx, q, refused)
		if err != nil {
			return err
		}
		for _, r := range refused {
			st.RefusedSends = append(st.RefusedSends, refusedView(r, applied[r.Node]))
		}
		if st.Drifting, err = s.meshDrifting(ctx, q, on); err != nil {
			return err
		}
		st.Rollouts, err = activeRollouts(ctx, q)
		return err
	})
	if err != nil {
		return hq.MeshStatus{}, err
	}
	if t, ok := s.Trouble(); ok {
		st.Lines = append(st.Lines, t.Line())
	}
	st.AddLines()
	return st, nil
}

// nodeSet is the nodes a mesh status is of; nil is every node.
type nodeSet map[string]bool

func (n nodeSet) has(node string) bool { return n == nil || n[node] }

// meshCounts counts the nodes sel matches by status into st, and returns them: counted in the
// database when sel is nil, else from every node's status row.
func (s *Store) meshCounts(ctx context.Context, q driver.Queries, sel *selector.Selector, st *hq.MeshStatus) (nodeSet, error) {
	if sel == nil {
		fl, err := fleetCounts(ctx, q, s.silentBefore())
		for status, n := range fl.nodes {
			st.Nodes[string(status)] = n
		}
		st.Nodes["total"] = fl.total
		return nil, err
	}
	rows, err := q.NodeStatusList(ctx)
	if err != nil {
		return nil, err
	}
	on := nodeSet{}
	now := s.clock()
	for _, n := range rows {
		if sel.Matches(decodePairs(n.Labels)) {
			on[n.Name] = true
			st.Nodes[string(s.nodeStatus(n, now))]++
		}
	}
	st.Nodes["total"] = len(on)
	return on, nil
}

// meshDriftTop is how many of the resources that drift most a mesh status lists.
const meshDriftTop = 10

// meshDrifting is what drifts most on the nodes on in the last 24 hours: counted in the
// database for every node, and from each selected node's counts otherwise.
func (s *Store) meshDrifting(ctx context.Context, q driver.Queries, on nodeSet) ([]hq.MeshDrift, error) {
	since := hq.FormatTime(s.clock().Add(-24 * time.Hour))
	out := []hq.MeshDrift{}
	if on == nil {
		top, err := q.DriftTopSince(ctx, driver.DriftTopSinceParams{Since: since, Max: meshDriftTop})
		for _, d := range top {
			out = append(out, hq.MeshDrift{Module: d.Module, Resource: d.Resource, Nodes: int(d.Nodes), Drifts: int(d.Drifts)})
		}
		return out, err
	}
	if len(on) == 0 {
		return out, nil
	}
	counts, err := q.DriftCountsByNodesSince(ctx, driver.DriftCountsByNodesSinceParams{Nodes: slices.Sorted(maps.Keys(on)), Since: since, Threshold: 1})
	if err != nil {
		return nil, err
	}
	at := map[string]int{}
	for _, c := range counts {
		ref := hq.Ref(c.Module, c.Resource)
		i, ok := at[ref]
		if !ok {
			i = len(out)
			at[ref] = i
			out = append(out, hq.MeshDrift{Module: c.Module, Resource: c.Resource})
		}
		out[i].Nodes++
		out[i].Drifts += int(c.Drifts)
	}
	// DriftTopSince's order: most put back first, then by module and resource.
	slices.SortFunc(out, func(a, b hq.MeshDrift) int {
		return cmp.Or(cmp.Compare(b.Drifts, a.Drifts), cmp.Compare(a.Module, b.Module), cmp.Compare(a.Resource, b.Resource))
	})
	return out[:min(len(out), meshDriftTop)], nil
}

// meshStuck lists each stuck resource once, with the nodes it is stuck on, its scope, and
// what its failure blocks everywhere.
func meshStuck(ctx context.Context, q driver.Queries, on nodeSet, st *hq.MeshStatus) error {
	m, err := loadMesh(ctx, q)
	if err != nil {
		return err
	}
	rows, err := q.ResourceStateListStuck(ctx)
	if err != nil {
		return err
	}
	blocked, err := q.ResourceStateBlockedCounts(ctx)
	if err != nil {
		return err
	}
	blocks := map[string]int{}
	for _, b := range blocked {
		if on.has(b.Node) {
			blocks[b.BlockedBy] += int(b.Blocks)
		}
	}
	for _, r := range rows {
		if !on.has(r.Node) {
			continue
		}
		n := len(st.Stuck)
		if n == 0 || st.Stuck[n-1].Module != r.Module || st.Stuck[n-1].Resource != r.Resource {
			ref := hq.Ref(r.Module, r.Resource)
			st.Stuck = append(st.Stuck, hq.MeshStuck{Module: r.Module, Resource: r.Resource, Scope: m.scope(r.Module, r.Resource),
				NeverApplied: true, Blocks: blocks[ref]})
			n++
		}
		st.Stuck[n-1].Nodes = append(st.Stuck[n-1].Nodes, r.Node)
		st.Stuck[n-1].NeverApplied = st.Stuck[n-1].NeverApplied && r.NeverApplied
	}
	return nil
}

// fleet is every node counted by its status, and every resource by its state.
type fleet struct {
	nodes     map[hq.Status]int
	resources map[hq.State]int
	total     int
}

// fleetCounts counts the fleet in the database, a row per status, rather than reading every
// node's row into the controller: at 50,000 nodes that was most of what /status cost. silent
// is the Store's silentBefore at the moment counted.
func fleetCounts(ctx context.Context, q driver.Queries, silent string) (fleet, error) {
	f := fleet{nodes: map[hq.Status]int{}, resources: map[hq.State]int{}}
	rows, err := q.NodeStatusCounts(ctx, silent)
	if err != nil {
		return f, err
	}
	for _, r := range rows {
		f.nodes[hq.Status(r.Status)] += int(r.Nodes)
		f.total += int(r.Nodes)
		f.resources[hq.StateApplied] += int(r.Applied)
		f.resources[hq.StatePending] += int(r.Pending)
		f.resources[hq.StateFailed] += int(r.Failed)
		f.resources[hq.StateStuck] += int(r.Stuck)
		f.resources[hq.StateHeld] += int(r.Held)
		f.resources[hq.StateGroupedPending] += int(r.GroupedPending)
	}
	return f, nil
}

// silentBefore is the stored time a node's last report must be older than for hq.StatusOf to
// call it silent now: now-SilentAfter, which a report time (kept to the millisecond) is before
// exactly when it is before that instant rounded up to the millisecond.
func (s *Store) silentBefore() string {
	return hq.FormatTime(s.clock().Add(-s.opt.SilentAfter).Add(time.Millisecond - 1).Truncate(time.Millisecond))
}

// appliedGenerations reads the applied generation of the nodes that refused sends, which a
// refused send is shown with.
func appliedGenerations(ctx context.Context, q driver.Queries, refused []driver.Send) (map[string]int64, error) {
	applied := map[string]int64{}
	if len(refused) == 0 {
		return applied, nil
	}
	var names []string
	for _, r := range refused {
		if _, ok := applied[r.Node]; !ok {
			applied[r.Node] = 0
			names = append(names, r.Node)
		}
	}
	nodes, err := q.NodeListByNames(ctx, names)
	for _, n := range nodes {
		applied[n.Name] = n.AppliedGeneration
	}
	return applied, err
}
