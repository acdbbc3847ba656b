package db

import (
	"github.com/meshhq/hq/db/internal/dbsqlc"

	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/meshhq/hq"
)

// PutModuleResult says what an upload did.
type PutModuleResult struct {
	Revision int64 `json:"revision"`
	// Created is false when the upload was identical to the newest revision and changed nothing.
	Created bool `json:"created"`
	// Generations are the new generations of the nodes this upload moved to the new revision:
	// every node it is assigned to, but on a fleet only the first chunk of them.
	Generations map[string]int64 `json:"generations"`
	// More says the other nodes follow in the background, a chunk per transaction, within
	// seconds; their pins are in assignments.revision.
	More bool `json:"more"`
}

// PutModule stores a new revision of a module and moves the nodes it is assigned to onto it:
// each node's pin, declaration and generation move in one transaction, the first chunk of
// nodes in the upload's own, the rest by the mover. A path that would overlap another
// module's on any of those nodes refuses the upload (conflict) and changes nothing.
func (s *Store) PutModule(ctx context.Context, name string, resources []hq.Resource) (PutModuleResult, error) {
	res := PutModuleResult{Generations: map[string]int64{}}
	if !hq.ValidName(name) {
		return res, hq.NameError("module", name)
	}
	if err := hq.ValidateModule(resources); err != nil {
		return res, err
	}
	body, err := json.Marshal(resources)
	if err != nil {
		return res, err
	}
	digest := hq.DigestOf(body)
	rolled := false
	err = s.inTx(ctx, func(q dbsqlc.Querier) error {
		if cur, err := latestRevision(ctx, q, name); err == nil && cur.Digest == digest {
			res.Revision = cur.Revision
			return nil
		} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		res.Created = true
		now := s.now()
		rev, err := q.ModuleUpsert(ctx, dbsqlc.ModuleUpsertParams{Name: name, Now: now})
		if err != nil {
			return err
		}
		res.Revision = rev
		if err := q.ModuleRevisionInsert(ctx, dbsqlc.ModuleRevisionInsertParams{
			Module: name, Revision: rev, Resources: string(body), ResourceCount: int64(len(resources)),
			Digest: digest, CreatedAt: now,
		}); err != nil {
			return err
		}
		if err := writeRevisionRows(ctx, q, name, rev, resources); err != nil {
			return err
		}
		// The paths meet every node's other modules now; the first chunk of nodes moves to
		// the new revision in this transaction (all of a small mesh), the mover does the rest.
		if err := newPathCheck(name, resources).checkModule(ctx, q); err != nil {
			return err
		}
		nodes, err := assignedNodes(ctx, q, name)
		if err != nil {
			return err
		}
		if err := checkRenderOnNodes(ctx, q, name, resources, nodes); err != nil {
			return err
		}
		// Placements with a rollout policy move their pins in waves; the rest move now.
		if rolled, err = s.startRollouts(ctx, q, name, rev); err != nil {
			return err
		}
		res.Generations, res.More, err = s.movePins(ctx, q, name, rev)
		return err
	})
	if err == nil {
		if rolled {
			s.startRolloutLoop()
			s.rolloutsActive.Store(true)
			s.WakeRollouts()
		}
		s.ringAll(res.Generations)
		if res.More {
			s.wakeMover()
		}
	}
	if res.Generations == nil {
		res.Generations = map[string]int64{}
	}
	return res, err
}

// GetModule returns a module at its newest revision, with the nodes it is assigned to.
func (s *Store) GetModule(ctx context.Context, name string) (hq.ModuleView, error) {
	var v hq.ModuleView
	err := s.inReadTx(ctx, func(q dbsqlc.Querier) error {
		m, err := q.ModuleGet(ctx, name)
		if err != nil {
			return notFound(err, "no module %s", name)
		}
		rev, err := q.ModuleRevisionGet(ctx, dbsqlc.ModuleRevisionGetParams{Module: name, Revision: m.Revision})
		if err != nil {
			return err
		}
		if v.Resources, err = decodeResources(rev.Resources); err != nil {
			return err
		}
		v.Name, v.Revision, v.Digest, v.UpdatedAt = m.Name, m.Revision, rev.Digest, hq.ParseTime(m.UpdatedAt)
		v.Nodes, err = assignedNodes(ctx, q, name)
		return err
	})
	return v, err
}

// ListModules returns every module without its resources.
func (s *Store) ListModules(ctx context.Context) ([]hq.ModuleView, error) {
	var out []hq.ModuleView
	err := s.inReadTx(ctx, func(q dbsqlc.Querier) error {
		mods, err := q.ModuleList(ctx)
		if err != nil {
			return err
		}
		out = make([]hq.ModuleView, 0, len(mods))
		for _, m := range mods {
			nodes, err := assignedNodes(ctx, q, m.Name)
			if err != nil {
				return err
			}
			out = append(out, hq.ModuleView{Name: m.Name, Revision: m.Revision, Nodes: nodes, UpdatedAt: hq.ParseTime(m.UpdatedAt)})
		}
		return nil
	})
	return out, err
}

func assignedNodes(ctx context.Context, q dbsqlc.Querier, module string) ([]string, error) {
	rows, err := q.AssignmentListByModule(ctx, module)
	nodes := make([]string, 0, len(rows))
	for _, r := range rows {
		nodes = append(nodes, r.Node)
	}
	return nodes, err
}

func latestRevision(ctx context.Context, q dbsqlc.Querier, module string) (dbsqlc.ModuleRevision, error) {
	m, err := q.ModuleGet(ctx, module)
	if err != nil {
		return dbsqlc.ModuleRevision{}, err
	}
	return q.ModuleRevisionGet(ctx, dbsqlc.ModuleRevisionGetParams{Module: module, Revision: m.Revision})
}

func decodeResources(s string) ([]hq.Resource, error) {
	var rs []hq.Resource
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		return nil, fmt.Errorf("stored resources do not decode: %w", err)
	}
	return rs, nil
}

// pathCheck refuses a module whose paths overlap, on a node, with those of the node's other
// modules (hq.PathOverlaps): the same path twice, or a path under one that is not a directory.
// Either way hostd would undo one resource while applying the other on every reconcile, each
// reporting the other's work as drift. One pathCheck serves one transaction and one module's
// resources; it decodes each other revision once and checks each distinct set of other modules
// once, so a new revision of a module on 10,000 alike nodes costs a few checks, not 10,000.
type pathCheck struct {
	module string
	new    []hq.PathClaim
	refs   []string // refs[claim.ID] names the resource that makes the claim
	// revs holds the claims of a module revision, keyed module@revision.
	revs map[string][]hq.PathClaim
	// clean holds the sets of other modules, as keys, already found not to overlap.
	clean map[string]bool
}

func newPathCheck(module string, resources []hq.Resource) *pathCheck {
	p := &pathCheck{module: module, revs: map[string][]hq.PathClaim{}, clean: map[string]bool{}}
	for _, r := range resources {
		if r.Path != "" {
			p.new = append(p.new, hq.PathClaim{Path: r.Path, Kind: r.Kind, New: true, ID: p.ref(module, r.Name)})
		}
	}
	return p
}

func (p *pathCheck) ref(module, name string) int {
	p.refs = append(p.refs, hq.Ref(module, name))
	return len(p.refs) - 1
}

// check refuses p's module on node when its paths overlap with those of the node's other modules.
func (p *pathCheck) check(ctx context.Context, q dbsqlc.Querier, node string) error {
	if len(p.new) == 0 {
		return nil
	}
	rows, err := q.AssignmentListByNode(ctx, node)
	if err != nil {
		return err
	}
	var others []pin
	for _, o := range rows {
		if o.Module != p.module {
			others = append(others, pin{o.Module, o.Revision})
		}
	}
	return p.against(ctx, q, node, others)
}

// checkModule is check for every node p's module is assigned to, from one query: each
// distinct set of other modules is checked once.
func (p *pathCheck) checkModule(ctx context.Context, q dbsqlc.Querier) error {
	if len(p.new) == 0 {
		return nil
	}
	rows, err := q.AssignmentOthersOfModule(ctx, p.module)
	if err != nil {
		return err
	}
	for i := 0; i < len(rows); {
		j, others := i, []pin{}
		for ; j < len(rows) && rows[j].Node == rows[i].Node; j++ {
			others = append(others, pin{rows[j].Module, rows[j].Revision})
		}
		if err := p.against(ctx, q, rows[i].Node, others); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// pin is a module at the revision an assignment pins.
type pin struct {
	module   string
	revision int64
}

// against refuses p's module on node when its paths overlap with those of others there.
func (p *pathCheck) against(ctx context.Context, q dbsqlc.Querier, node string, others []pin) error {
	var key strings.Builder
	for _, o := range others {
		fmt.Fprintf(&key, "%s@%d ", o.module, o.revision)
	}
	if p.clean[key.String()] {
		return nil
	}
	claims := slices.Clone(p.new)
	for _, o := range others {
		cs, err := p.revision(ctx, q, o.module, o.revision)
		if err != nil {
			return err
		}
		claims = append(claims, cs...)
	}
	if found := hq.PathOverlaps(claims); len(found) > 0 {
		o := found[0]
		if o.Same() && !o.Inner.New {
			o.Outer, o.Inner = o.Inner, o.Outer // the new resource is the one that declares it again
		}
		return hq.Errorf(hq.CodeConflict, "on node %s: %s", node, o.Describe(p.refs[o.Outer.ID], p.refs[o.Inner.ID]))
	}
	p.clean[key.String()] = true
	return nil
}

// revision returns the claims of a stored module revision, decoding it only the first time.
func (p *pathCheck) revision(ctx context.Context, q dbsqlc.Querier, module string, revision int64) ([]hq.PathClaim, error) {
	k := fmt.Sprintf("%s@%d", module, revision)
	if cs, ok := p.revs[k]; ok {
		return cs, nil
	}
	rev, err := q.ModuleRevisionGet(ctx, dbsqlc.ModuleRevisionGetParams{Module: module, Revision: revision})
	if err != nil {
		return nil, err
	}
	rs, err := decodeResources(rev.Resources)
	if err != nil {
		return nil, err
	}
	cs := []hq.PathClaim{}
	for _, r := range rs {
		if r.Path != "" {
			cs = append(cs, hq.PathClaim{Path: r.Path, Kind: r.Kind, ID: p.ref(module, r.Name)})
		}
	}
	p.revs[k] = cs
	return cs, nil
}
