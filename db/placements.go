package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/selector"
	"github.com/meshhq/hq/tmpl"
)

// decodePairs reads a node's labels or vars column; a row written by hand that is not a JSON
// object reads as none.
func decodePairs(s string) map[string]string {
	m := map[string]string{}
	if s != "" {
		_ = json.Unmarshal([]byte(s), &m)
	}
	return m
}

func encodePairs(m map[string]string) (string, error) {
	if m == nil {
		m = map[string]string{}
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// SetLabels replaces a node's labels. The generation moves when a placement's membership
// changes with them, or when a module on the node fills its templates in from labels: the node
// gains the module of every placement it now matches and loses that of every placement it no
// longer matches, in this transaction, exactly as an operator's assign or unassign would. A
// module the node would get twice, or a path it would declare twice, or a label a template
// needs taken away, refuses the change (conflict) and nothing changes.
func (s *Store) SetLabels(ctx context.Context, node string, labels map[string]string, ifMatch *int64) (int64, error) {
	if err := hq.ValidateLabels(labels); err != nil {
		return 0, err
	}
	return s.setValues(ctx, node, ifMatch, labels, func(v *tmpl.Values) { v.Labels = labels },
		func(q driver.Queries, text string) (bool, error) {
			if err := q.NodeSetLabels(ctx, driver.NodeSetLabelsParams{Name: node, Labels: text}); err != nil {
				return false, err
			}
			return s.placeOnNode(ctx, q, node, labels)
		})
}

// SetVars replaces a node's vars. When a module on the node uses them in its templates, its
// declaration changes with them and its generation moves; vars a template needs are refused
// (conflict) before they are taken away.
func (s *Store) SetVars(ctx context.Context, node string, vars map[string]string, ifMatch *int64) (int64, error) {
	if err := hq.ValidateVars(vars); err != nil {
		return 0, err
	}
	return s.setValues(ctx, node, ifMatch, vars, func(v *tmpl.Values) { v.Vars = vars },
		func(q driver.Queries, text string) (bool, error) {
			return false, q.NodeSetVars(ctx, driver.NodeSetVarsParams{Name: node, Vars: text})
		})
}

// setValues replaces one of a node's sets of values (pairs, encoded for write) and checks that
// every template on the node can still be filled in with them and fills no path in to one
// that overlaps another (change puts them in place); a refusal rolls the write back. The
// generation moves when write says the declaration changed, or when templates on the node use
// values at all.
func (s *Store) setValues(ctx context.Context, node string, ifMatch *int64, pairs map[string]string,
	change func(v *tmpl.Values), write func(q driver.Queries, text string) (bool, error)) (int64, error) {
	text, err := encodePairs(pairs)
	if err != nil {
		return 0, err
	}
	return s.changeDeclaration(ctx, node, ifMatch, func(ctx context.Context, q driver.Queries) (bool, error) {
		n, err := q.NodeGet(ctx, node)
		if err != nil {
			return false, err
		}
		v := valuesOf(n)
		change(&v)
		changed, err := write(q, text)
		if err != nil {
			return false, err
		}
		// Checked with the modules the write leaves on the node: a placement it joins is
		// filled in with the new values too, and one it leaves is not in the way.
		uses, err := s.checkNodeValues(ctx, q, v)
		return changed || uses, err
	})
}

// placeOnNode brings one node's placement assignments in line with its labels, in q's
// transaction, and reports whether its declaration changed.
func (s *Store) placeOnNode(ctx context.Context, q driver.Queries, node string, labels map[string]string) (bool, error) {
	placements, err := q.PlacementList(ctx)
	if err != nil {
		return false, err
	}
	changed := false
	for _, p := range placements {
		sel, err := selector.ParseStored(p.Selector)
		if err != nil {
			return false, err
		}
		match := sel.Matches(labels)
		a, err := q.AssignmentGet(ctx, driver.AssignmentGetParams{Node: node, Module: p.Module})
		has := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, err
		}
		switch {
		case match && has && a.Source != p.Name:
			return false, hq.Errorf(hq.CodeConflict, "placement %s would put module %s on node %s, which has it from %s", p.Name, p.Module, node, sourceName(a.Source))
		case match && !has:
			if err := s.checkPlaceable(ctx, q, p, node); err != nil {
				return false, err
			}
			if err := s.addPlaced(ctx, q, p, []string{node}, true); err != nil {
				return false, err
			}
			changed = true
		case !match && has && a.Source == p.Name:
			if err := s.removePlaced(ctx, q, p.Name, p.Module, []string{node}); err != nil {
				return false, err
			}
			changed = true
		}
	}
	if changed {
		// Each placement's module was checked against the modules the node had; together
		// they must fit as well.
		return true, s.checkNodeSize(ctx, q, node)
	}
	return false, nil
}

// checkPlaceable refuses (conflict) to place p's module on a node that cannot fill in its
// templates, or whose declaration it would make too large, as assigning it by hand would be refused: the node would be declared a module
// whose declaration cannot be composed. A node is registered without vars, so one that a
// templated placement would take on registration is refused until it has them.
func (s *Store) checkPlaceable(ctx context.Context, q driver.Queries, p driver.Placement, node string) error {
	rev, err := latestRevision(ctx, q, p.Module)
	if err != nil {
		return err
	}
	n, err := q.NodeGet(ctx, node)
	if err != nil {
		return err
	}
	// Nor a node whose declaration it would make larger than the bound; worked out first,
	// without rendering what it bounds.
	rows, err := q.AssignmentDeclaration(ctx, node)
	if err != nil {
		return err
	}
	pins := []pin{{p.Module, rev.Revision}}
	for _, r := range rows {
		pins = append(pins, pin{r.Module, r.Revision})
	}
	if err := s.checkSize(ctx, q, pins, valuesOf(n)); err != nil {
		return hq.Errorf(hq.CodeConflict, "placement %s would put module %s on node %s: %v", p.Name, p.Module, node, err)
	}
	resources, err := s.resources(ctx, q, p.Module, rev.Revision)
	if err != nil || !templated(resources) {
		return err
	}
	if _, err := render(resources, valuesOf(n)); err != nil {
		return hq.Errorf(hq.CodeConflict, "placement %s would put module %s on node %s, which cannot fill in its templates (%v): give the node the labels and vars they need, then the labels that place it", p.Name, p.Module, node, err)
	}
	return nil
}

// sourceName says who made an assignment, for messages.
func sourceName(source string) string {
	if source == SourceOperator {
		return "an operator's assignment"
	}
	return "placement " + source
}

// addPlaced assigns p's module to nodes at its newest revision and declares its resources
// there, set-based; with check, each node's paths are checked first (the nodes of a
// placement's first write were checked all at once). It does not bump generations.
func (s *Store) addPlaced(ctx context.Context, q driver.Queries, p driver.Placement, nodes []string, check bool) error {
	rev, err := latestRevision(ctx, q, p.Module)
	if err != nil {
		return notFound(err, "no module %s", p.Module)
	}
	at, rollout, err := joinAt(ctx, q, p, rev.Revision)
	if err != nil {
		return err
	}
	resources, err := s.resources(ctx, q, p.Module, at)
	if err != nil {
		return err
	}
	if check {
		pc := newPathCheck(p.Module, resources)
		pc.pending = nodes
		for _, n := range nodes {
			if err := pc.check(ctx, q, n); err != nil {
				return err
			}
		}
	}
	if err := q.AssignmentInsertOnNodes(ctx, driver.AssignmentInsertOnNodesParams{Module: p.Module, Taken: p.Taken, AssignedAt: s.now(),
		Revision: at, Source: p.Name, Nodes: nodes}); err != nil {
		return err
	}
	if rollout != nil {
		if err := q.RolloutNodeInsertOnNodes(ctx, driver.RolloutNodeInsertOnNodesParams{Rollout: rollout.ID, FromRevision: at, Nodes: nodes}); err != nil {
			return err
		}
	}
	declared, err := s.declared(ctx, q, p.Module, at)
	if err != nil {
		return err
	}
	return redeclare(ctx, q, p.Module, declared, nodes, s.now(), fmt.Sprintf("placed %s revision %d by %s", p.Module, at, p.Name))
}

// joinAt is the revision a node joining placement p is assigned, the module's newest being
// newest, and the rollout it joins, if any. During a rollout of the newest revision a node
// joins at the revision the rollout moves from, and waits its turn in the rollout: a revision
// the rollout has not found good reaches no node by the side. After a rollback of the
// placement (unless aborted, or a newer revision came since), it joins at the revision the
// placement was rolled back to, which is known good, and outside the rollback.
func joinAt(ctx context.Context, q driver.Queries, p driver.Placement, newest int64) (int64, *driver.Rollout, error) {
	latest, err := q.RolloutLatestOfPlacement(ctx, driver.RolloutLatestOfPlacementParams{Placement: p.Name, Module: p.Module})
	if err != nil || len(latest) == 0 {
		return newest, nil, err
	}
	r := latest[0]
	switch st := hq.RolloutState(r.State); {
	case r.RollbackOf == newest && st != hq.RolloutAborted:
		return r.ToRevision, nil, nil
	case (st == hq.RolloutProgressing || st == hq.RolloutPaused) && r.ToRevision == newest && r.FromRevision > 0:
		return r.FromRevision, &r, nil
	}
	return newest, nil, nil
}

// removePlaced takes a source's assignments of module off nodes; their resources leave the
// declaration with them. It does not bump generations.
func (s *Store) removePlaced(ctx context.Context, q driver.Queries, source, module string, nodes []string) error {
	return q.AssignmentDeleteOnNodes(ctx, driver.AssignmentDeleteOnNodesParams{Module: module, Source: source, Nodes: nodes})
}

// bumpNodes steps the generation of every node named, in one statement.
func bumpNodes(ctx context.Context, q driver.Queries, nodes []string) (map[string]int64, error) {
	gens := map[string]int64{}
	if len(nodes) == 0 {
		return gens, nil
	}
	bumped, err := q.NodeBumpGenerations(ctx, nodes)
	for _, b := range bumped {
		gens[b.Name] = b.Generation
	}
	return gens, err
}

// membership is how a placement's selector meets the registered nodes now.
type membership struct {
	matched []string // every node the selector matches, in name order
	add     []string // matched, without this placement's assignment
	remove  []string // with this placement's assignment, no longer matched
}

// placementMembership compares a placement's selector with every node's labels and with the
// assignments it made: one read of each, however many nodes.
func placementMembership(ctx context.Context, q driver.Queries, p driver.Placement, nodes []driver.NodeLabelListRow) (membership, error) {
	var m membership
	sel, err := selector.ParseStored(p.Selector)
	if err != nil {
		return m, err
	}
	have, err := q.AssignmentListBySource(ctx, driver.AssignmentListBySourceParams{Source: p.Name, Module: p.Module})
	if err != nil {
		return m, err
	}
	placed := make(map[string]bool, len(have))
	for _, a := range have {
		placed[a.Node] = true
	}
	for _, n := range nodes {
		if !sel.Matches(decodePairs(n.Labels)) {
			continue
		}
		m.matched = append(m.matched, n.Name)
		if !placed[n.Name] {
			m.add = append(m.add, n.Name)
		}
		delete(placed, n.Name)
	}
	m.remove = slices.Sorted(maps.Keys(placed))
	return m, nil
}

// reconcilePlacement makes the next chunk of a placement's membership true, in q's
// transaction: it assigns the module to nodes that match and lack it, and takes it off nodes
// that no longer match, bumping each one's generation. A node that has the module from
// elsewhere is left alone (PutPlacement refuses that case; it can arise later only by an
// operator's own assign, which then wins). It returns the new generations and whether work is left.
func (s *Store) reconcilePlacement(ctx context.Context, q driver.Queries, p driver.Placement, nodes []driver.NodeLabelListRow, check bool) (map[string]int64, bool, error) {
	m, err := placementMembership(ctx, q, p, nodes)
	if err != nil {
		return nil, false, err
	}
	if len(m.add)+len(m.remove) == 0 {
		return s.retakePlaced(ctx, q, p)
	}
	rev, err := latestRevision(ctx, q, p.Module)
	if err != nil {
		return nil, false, err
	}
	resources, err := s.resources(ctx, q, p.Module, rev.Revision)
	if err != nil {
		return nil, false, err
	}
	if len(m.add) > 0 {
		taken, err := q.AssignmentListOfModuleOnNodes(ctx, driver.AssignmentListOfModuleOnNodesParams{Module: p.Module, Nodes: m.add})
		if err != nil {
			return nil, false, err
		}
		elsewhere := map[string]bool{}
		for _, t := range taken {
			elsewhere[t.Node] = true
		}
		m.add = slices.DeleteFunc(m.add, func(n string) bool { return elsewhere[n] })
	}
	limit := min(moveChunkNodes, max(1, moveChunkRows/max(1, len(resources))))
	remove := m.remove[:min(limit, len(m.remove))]
	add := m.add[:min(limit-len(remove), len(m.add))]
	more := len(m.add)+len(m.remove) > len(add)+len(remove)
	if err := s.removePlaced(ctx, q, p.Name, p.Module, remove); err != nil {
		return nil, false, err
	}
	if len(add) > 0 {
		if err := s.addPlaced(ctx, q, p, add, check); err != nil {
			return nil, false, err
		}
	}
	gens, err := bumpNodes(ctx, q, append(slices.Clone(remove), add...))
	return gens, more, err
}

// PutPlacement creates or changes a placement and assigns its module to the first chunk of
// the nodes its selector matches in this transaction; the mover does the rest, a chunk per
// transaction. A node that has the module from an operator or another placement, another
// placement of the module matching one of the same nodes, or a path the module would declare
// twice on a node refuses the placement (conflict), and nothing changes.
func (s *Store) PutPlacement(ctx context.Context, p hq.Placement) (hq.Placement, error) {
	if !hq.ValidName(p.Name) {
		return p, hq.NameError("placement", p.Name)
	}
	if p.Name == SourceOperator {
		return p, hq.Errorf(hq.CodeInvalid, "a placement may not be named %q: that name is the source of operators' assignments", SourceOperator)
	}
	if !hq.ValidName(p.Module) {
		return p, hq.NameError("module", p.Module)
	}
	sel, err := selector.Parse(p.Selector)
	if err != nil {
		return p, err
	}
	policy := ""
	if p.Rollout != nil {
		if err := p.Rollout.Normalize(); err != nil {
			return p, err
		}
		b, err := json.Marshal(p.Rollout)
		if err != nil {
			return p, err
		}
		policy = string(b)
	}
	var gens map[string]int64
	err = s.inTx(ctx, func(q driver.Queries) error {
		rev, err := latestRevision(ctx, q, p.Module)
		if err != nil {
			return notFound(err, "no module %s", p.Module)
		}
		if err := q.PlacementUpsert(ctx, driver.PlacementUpsertParams{Name: p.Name, Module: p.Module, Selector: sel.String(),
			Taken: p.Taken, Rollout: policy, Now: s.now()}); err != nil {
			return err
		}
		row, err := q.PlacementGet(ctx, p.Name)
		if err != nil {
			return err
		}
		nodes, err := q.NodeLabelList(ctx)
		if err != nil {
			return err
		}
		m, err := placementMembership(ctx, q, row, nodes)
		if err != nil {
			return err
		}
		if err := s.placementConflicts(ctx, q, row, rev, m, nodes); err != nil {
			return err
		}
		// What the module's old placement assignments leave (a placement moved to another
		// module) goes with the orphans; this placement's own first chunk is written here.
		gens, _, err = s.reconcilePlacement(ctx, q, row, nodes, false)
		return err
	})
	if err != nil {
		return p, err
	}
	s.ringAll(gens)
	// Read before the mover is woken: what this write assigned, not what the mover has added
	// by the time the read comes.
	out, err := s.GetPlacement(ctx, p.Name)
	s.wakeMover() // the rest of the chunks, and any assignments the old module of p left
	return out, err
}

// placementConflicts refuses a placement whose module some matched node has from elsewhere,
// that another placement of the module also puts on a matched node, or whose paths meet
// those of a matched node's other modules.
func (s *Store) placementConflicts(ctx context.Context, q driver.Queries, p driver.Placement, rev driver.ModuleRevision, m membership, nodes []driver.NodeLabelListRow) error {
	if len(m.matched) == 0 {
		return nil
	}
	has, err := q.AssignmentListOfModuleOnNodes(ctx, driver.AssignmentListOfModuleOnNodesParams{Module: p.Module, Nodes: m.matched})
	if err != nil {
		return err
	}
	for _, a := range has {
		if a.Source != p.Name {
			return hq.Errorf(hq.CodeConflict, "placement %s would put module %s on node %s, which has it from %s", p.Name, p.Module, a.Node, sourceName(a.Source))
		}
	}
	all, err := q.PlacementList(ctx)
	if err != nil {
		return err
	}
	inP := make(map[string]bool, len(m.matched))
	for _, n := range m.matched {
		inP[n] = true
	}
	for _, o := range all {
		if o.Name == p.Name || o.Module != p.Module {
			continue
		}
		sel, err := selector.ParseStored(o.Selector)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if inP[n.Name] && sel.Matches(decodePairs(n.Labels)) {
				return hq.Errorf(hq.CodeConflict, "placements %s and %s would both put module %s on node %s", p.Name, o.Name, p.Module, n.Name)
			}
		}
	}
	if len(m.add) == 0 {
		return nil
	}
	resources, err := s.resources(ctx, q, p.Module, rev.Revision)
	if err != nil {
		return err
	}
	// The other modules of the nodes it would join, for their declarations' size and paths.
	rows, err := q.AssignmentListByNodes(ctx, m.add)
	if err != nil {
		return err
	}
	others := map[string][]pin{}
	for _, r := range rows {
		if r.Module != p.Module {
			others[r.Node] = append(others[r.Node], pin{r.Module, r.Revision})
		}
	}
	// As assigning the module to each node by hand would be refused, so is placing it: the
	// size first, which is worked out without rendering what it bounds.
	if names, first, err := s.oversized(ctx, q, p.Module, rev.Revision, m.add, others); err != nil || names != "" {
		if err != nil {
			return err
		}
		return hq.Errorf(hq.CodeConflict, "placement %s would put module %s on %s whose declaration would be more than %s: %s", p.Name, p.Module, names, byteCount(s.opt.MaxDeclaration), first)
	}
	if names, first, err := lackingNodes(ctx, q, resources, m.add); err != nil || first != nil {
		if err != nil {
			return err
		}
		return hq.Errorf(hq.CodeConflict, "placement %s would put module %s on %s that cannot fill in its templates: %v", p.Name, p.Module, names, first)
	}
	pc := newPathCheck(p.Module, resources)
	if len(pc.new) == 0 {
		return nil
	}
	// Each distinct set of other modules is checked once.
	pc.pending = m.add
	for _, n := range m.add {
		if err := pc.against(ctx, q, n, others[n]); err != nil {
			return err
		}
	}
	return nil
}

// GetPlacement returns a placement with how many nodes it matches and has placed its module on.
func (s *Store) GetPlacement(ctx context.Context, name string) (hq.Placement, error) {
	var out hq.Placement
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		p, err := q.PlacementGet(ctx, name)
		if err != nil {
			return notFound(err, "no placement %s", name)
		}
		nodes, err := q.NodeLabelList(ctx)
		if err != nil {
			return err
		}
		out, err = placementView(ctx, q, p, nodes)
		return err
	})
	return out, err
}

// ListPlacements returns every placement, by name.
func (s *Store) ListPlacements(ctx context.Context) ([]hq.Placement, error) {
	out := []hq.Placement{}
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		ps, err := q.PlacementList(ctx)
		if err != nil || len(ps) == 0 {
			return err
		}
		nodes, err := q.NodeLabelList(ctx)
		if err != nil {
			return err
		}
		for _, p := range ps {
			v, err := placementView(ctx, q, p, nodes)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

func placementView(ctx context.Context, q driver.Queries, p driver.Placement, nodes []driver.NodeLabelListRow) (hq.Placement, error) {
	m, err := placementMembership(ctx, q, p, nodes)
	if err != nil {
		return hq.Placement{}, err
	}
	have, err := q.AssignmentListBySource(ctx, driver.AssignmentListBySourceParams{Source: p.Name, Module: p.Module})
	v := hq.Placement{Name: p.Name, Module: p.Module, Selector: p.Selector, Taken: p.Taken,
		Matched: len(m.matched), Assigned: len(have),
		CreatedAt: hq.ParseTime(p.CreatedAt), UpdatedAt: hq.ParseTime(p.UpdatedAt)}
	if p.Rollout != "" {
		pol, err := rolloutPolicy(p.Rollout)
		if err != nil {
			return hq.Placement{}, fmt.Errorf("placement %s: %w", p.Name, err)
		}
		v.Rollout = &pol
	}
	return v, err
}

// DeletePlacement removes a placement; its module leaves its nodes as if an operator had
// unassigned it, the first chunk in this transaction and the rest by the mover.
func (s *Store) DeletePlacement(ctx context.Context, name string) error {
	var gens map[string]int64
	err := s.inTx(ctx, func(q driver.Queries) error {
		n, err := q.PlacementDelete(ctx, name)
		if err != nil {
			return err
		}
		if n == 0 {
			return hq.Errorf(hq.CodeNotFound, "no placement %s", name)
		}
		gens, _, err = s.removeOrphans(ctx, q)
		return err
	})
	if err == nil {
		s.ringAll(gens)
		s.wakeMover()
	}
	return err
}

// removeOrphans takes the next chunk of assignments whose placement is gone (or places
// another module now) off their nodes, and reports whether there was any.
func (s *Store) removeOrphans(ctx context.Context, q driver.Queries) (map[string]int64, bool, error) {
	rows, err := q.AssignmentListOrphaned(ctx, moveChunkNodes)
	if err != nil || len(rows) == 0 {
		return nil, false, err
	}
	var nodes []string
	for i := 0; i < len(rows); {
		j := i
		var group []string
		for ; j < len(rows) && rows[j].Source == rows[i].Source && rows[j].Module == rows[i].Module; j++ {
			group = append(group, rows[j].Node)
		}
		if err := s.removePlaced(ctx, q, rows[i].Source, rows[i].Module, group); err != nil {
			return nil, false, err
		}
		nodes = append(nodes, group...)
		i = j
	}
	slices.Sort(nodes)
	gens, err := bumpNodes(ctx, q, slices.Compact(nodes))
	return gens, true, err
}

// placementWork reports, from a read snapshot, whether any placement has work: assignments
// left by a placement that is gone, or a membership or taken flag to make true. The mover asks
// it on every tick, so a fleet at rest costs the writer nothing.
func (s *Store) placementWork(ctx context.Context) (bool, error) {
	found := false
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		orphans, err := q.AssignmentListOrphaned(ctx, 1)
		if err != nil || len(orphans) > 0 {
			found = len(orphans) > 0
			return err
		}
		ps, err := q.PlacementList(ctx)
		if err != nil || len(ps) == 0 {
			return err
		}
		nodes, err := q.NodeLabelList(ctx)
		if err != nil {
			return err
		}
		for _, p := range ps {
			m, err := placementMembership(ctx, q, p, nodes)
			if err != nil {
				return err
			}
			differ, err := q.AssignmentListTakenDiffers(ctx, driver.AssignmentListTakenDiffersParams{Source: p.Name, Module: p.Module, Taken: p.Taken, Max: 1})
			if err != nil {
				return err
			}
			if len(m.add)+len(m.remove)+len(differ) > 0 {
				found = true
				return nil
			}
		}
		return nil
	})
	return found, err
}

// placeSome does one chunk of placement work, the orphans first: it reports whether there was any.
func (s *Store) placeSome(ctx context.Context) (bool, error) {
	if work, err := s.placementWork(ctx); err != nil || !work {
		return false, err
	}
	var gens map[string]int64
	var found bool
	err := s.inTx(ctx, func(q driver.Queries) error {
		var err error
		gens, found, err = s.removeOrphans(ctx, q)
		if err != nil || found {
			return err
		}
		ps, err := q.PlacementList(ctx)
		if err != nil || len(ps) == 0 {
			return err
		}
		nodes, err := q.NodeLabelList(ctx)
		if err != nil {
			return err
		}
		for _, p := range ps {
			g, more, err := s.reconcilePlacement(ctx, q, p, nodes, true)
			if err != nil {
				return fmt.Errorf("placement %s: %w", p.Name, err)
			}
			if len(g) > 0 || more {
				gens, found = g, len(g) > 0
				return nil
			}
		}
		return nil
	})
	if err == nil {
		s.ringAll(gens)
	}
	return found && err == nil, err
}

// retakePlaced gives the next chunk of a placement's assignments the placement's taken flag,
// bumping their nodes' generations.
func (s *Store) retakePlaced(ctx context.Context, q driver.Queries, p driver.Placement) (map[string]int64, bool, error) {
	differ, err := q.AssignmentListTakenDiffers(ctx, driver.AssignmentListTakenDiffersParams{Source: p.Name, Module: p.Module,
		Taken: p.Taken, Max: moveChunkNodes + 1})
	if err != nil || len(differ) == 0 {
		return nil, false, err
	}
	more := len(differ) > moveChunkNodes
	differ = differ[:min(len(differ), moveChunkNodes)]
	if err := q.AssignmentSetTakenOnNodes(ctx, driver.AssignmentSetTakenOnNodesParams{Taken: p.Taken, Module: p.Module, Source: p.Name, Nodes: differ}); err != nil {
		return nil, false, err
	}
	gens, err := bumpNodes(ctx, q, differ)
	return gens, more, err
}
