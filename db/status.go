package db

import (
	"context"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// MeshStatus summarises every node from one snapshot: counts by status (counted in the
// database from each node's row), each stuck resource once with its scope, what waits on a
// take, refused sends, what drifts most, and the controller's own trouble writing, if any. Its cost grows with the
// nodes and with what is not fine, not with every resource of the fleet.
func (s *Store) MeshStatus(ctx context.Context) (hq.MeshStatus, error) {
	st := hq.NewMeshStatus()
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		fl, err := fleetCounts(ctx, q, s.silentBefore())
		if err != nil {
			return err
		}
		for status, n := range fl.nodes {
			st.Nodes[string(status)] = n
		}
		st.Nodes["total"] = fl.total
		if err := meshStuck(ctx, q, &st); err != nil {
			return err
		}
		held, err := q.ResourceStateListHeld(ctx)
		if err != nil {
			return err
		}
		counts := map[string]hq.HeldCounts{}
		var order []string
		for _, h := range held {
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
		applied, err := appliedGenerations(ctx, q, refused)
		if err != nil {
			return err
		}
		for _, r := range refused {
			st.RefusedSends = append(st.RefusedSends, refusedView(r, applied[r.Node]))
		}
		top, err := q.DriftTopSince(ctx, driver.DriftTopSinceParams{Since: hq.FormatTime(s.clock().Add(-24 * time.Hour)), Max: 10})
		if err != nil {
			return err
		}
		for _, d := range top {
			st.Drifting = append(st.Drifting, hq.MeshDrift{Module: d.Module, Resource: d.Resource, Nodes: int(d.Nodes), Drifts: int(d.Drifts)})
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

// meshStuck lists each stuck resource once, with the nodes it is stuck on, its scope, and
// what its failure blocks everywhere.
func meshStuck(ctx context.Context, q driver.Queries, st *hq.MeshStatus) error {
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
		blocks[b.BlockedBy] += int(b.Blocks)
	}
	for _, r := range rows {
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
