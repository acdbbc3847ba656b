package db

import (
	"context"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/internal/dbsqlc"
)

// MeshStatus summarises every node from one snapshot: counts by status (read from each node's
// row), each stuck resource once with its scope, what waits on a take, refused sends, what
// drifts most, and the controller's own trouble writing, if any. Its cost grows with the
// nodes and with what is not fine, not with every resource of the fleet.
func (s *Store) MeshStatus(ctx context.Context) (hq.MeshStatus, error) {
	st := hq.NewMeshStatus()
	err := s.inReadTx(ctx, func(q dbsqlc.Querier) error {
		nodes, err := q.NodeStatusList(ctx)
		if err != nil {
			return err
		}
		applied := make(map[string]int64, len(nodes))
		for _, n := range nodes {
			st.Nodes[string(s.nodeStatus(n))]++
			applied[n.Name] = n.AppliedGeneration
		}
		st.Nodes["total"] = len(nodes)
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
		for _, r := range refused {
			st.RefusedSends = append(st.RefusedSends, refusedView(r, applied[r.Node]))
		}
		top, err := q.DriftTopSince(ctx, dbsqlc.DriftTopSinceParams{Since: hq.FormatTime(s.Now().Add(-24 * time.Hour)), Max: 10})
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
func meshStuck(ctx context.Context, q dbsqlc.Querier, st *hq.MeshStatus) error {
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
		st.Stuck[n-1].NeverApplied = st.Stuck[n-1].NeverApplied && r.NeverApplied == 1
	}
	return nil
}
