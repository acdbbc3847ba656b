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
	// Generations are the new generations of the nodes the module is assigned to.
	Generations map[string]int64 `json:"generations"`
}

// PutModule stores a new revision of a module and, in the same transaction, re-declares it on
// every node it is assigned to, bumping their generations.
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
	err = s.inTx(ctx, func(q *dbsqlc.Queries) error {
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
		assigned, err := q.AssignmentListByModule(ctx, name)
		if err != nil {
			return err
		}
		reason := fmt.Sprintf("module %s revision %d", name, rev)
		paths := newPathCheck(name, resources)
		for _, a := range assigned {
			if err := s.declare(ctx, q, paths, a.Node, name, resources, reason); err != nil {
				return err
			}
		}
		bumped, err := q.NodeBumpGenerationByModule(ctx, name)
		for _, b := range bumped {
			res.Generations[b.Name] = b.Generation
		}
		return err
	})
	if err == nil {
		for n := range res.Generations {
			s.bells.ring(n)
		}
	}
	return res, err
}

// GetModule returns a module at its newest revision, with the nodes it is assigned to.
func (s *Store) GetModule(ctx context.Context, name string) (hq.ModuleView, error) {
	var v hq.ModuleView
	err := s.inReadTx(ctx, func(q *dbsqlc.Queries) error {
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
	err := s.inReadTx(ctx, func(q *dbsqlc.Queries) error {
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

func assignedNodes(ctx context.Context, q *dbsqlc.Queries, module string) ([]string, error) {
	rows, err := q.AssignmentListByModule(ctx, module)
	nodes := make([]string, 0, len(rows))
	for _, r := range rows {
		nodes = append(nodes, r.Node)
	}
	return nodes, err
}

func latestRevision(ctx context.Context, q *dbsqlc.Queries, module string) (dbsqlc.ModuleRevision, error) {
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

// declare brings a node's resource_states for one module in line with resources: new ones
// enter pending, changed ones start over as pending, unchanged ones keep their state, and
// ones no longer declared are deleted (the trigger records them as removed).
func (s *Store) declare(ctx context.Context, q *dbsqlc.Queries, paths *pathCheck, node, module string, resources []hq.Resource, reason string) error {
	if err := paths.check(ctx, q, node); err != nil {
		return err
	}
	rows, err := q.ResourceStateListByAssignment(ctx, dbsqlc.ResourceStateListByAssignmentParams{Node: node, Module: module})
	if err != nil {
		return err
	}
	have := make(map[string]dbsqlc.ResourceState, len(rows))
	for _, r := range rows {
		have[r.Resource] = r
	}
	now := s.now()
	for i, r := range resources {
		old, ok := have[r.Name]
		delete(have, r.Name)
		pos, dig := int64(i), r.Digest()
		switch {
		case !ok:
			err = q.ResourceStateInsert(ctx, dbsqlc.ResourceStateInsertParams{
				Node: node, Module: module, Resource: r.Name, Kind: r.Kind, SpecDigest: dig,
				Position: pos, GroupName: r.Group, Since: now, Reason: reason,
			})
		case old.SpecDigest != dig:
			err = q.ResourceStateRedeclare(ctx, dbsqlc.ResourceStateRedeclareParams{
				Node: node, Module: module, Resource: r.Name, Kind: r.Kind, SpecDigest: dig,
				Position: pos, GroupName: r.Group, Since: now, Reason: reason + " changed it",
			})
		case old.Position != pos || old.GroupName != r.Group:
			err = q.ResourceStateMove(ctx, dbsqlc.ResourceStateMoveParams{
				Node: node, Module: module, Resource: r.Name, Position: pos, GroupName: r.Group,
			})
		}
		if err != nil {
			return err
		}
	}
	for name := range have {
		if err := q.ResourceStateDelete(ctx, dbsqlc.ResourceStateDeleteParams{Node: node, Module: module, Resource: name}); err != nil {
			return err
		}
	}
	return nil
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
func (p *pathCheck) check(ctx context.Context, q *dbsqlc.Queries, node string) error {
	if len(p.new) == 0 {
		return nil
	}
	others, err := q.AssignmentListByNode(ctx, node)
	if err != nil {
		return err
	}
	var key strings.Builder
	for _, o := range others {
		if o.Module != p.module {
			fmt.Fprintf(&key, "%s@%d ", o.Module, o.Revision)
		}
	}
	if p.clean[key.String()] {
		return nil
	}
	claims := slices.Clone(p.new)
	for _, o := range others {
		if o.Module == p.module {
			continue
		}
		cs, err := p.revision(ctx, q, o.Module, o.Revision)
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
func (p *pathCheck) revision(ctx context.Context, q *dbsqlc.Queries, module string, revision int64) ([]hq.PathClaim, error) {
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
