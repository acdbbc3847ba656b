package db

import (
	"github.com/meshhq/hq/db/driver"

	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/paths"
	"github.com/meshhq/hq/tmpl"
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
	return s.PushModule(ctx, name, resources, "")
}

// PushModule is PutModule recording the revision's author (the operator ctx carries) and
// message; an upload identical to the newest revision changes neither.
func (s *Store) PushModule(ctx context.Context, name string, resources []hq.Resource, message string) (PutModuleResult, error) {
	res := PutModuleResult{Generations: map[string]int64{}}
	if !hq.ValidName(name) {
		return res, hq.NameError("module", name)
	}
	if err := hq.ValidateModule(resources); err != nil {
		return res, err
	}
	rolled := false
	err := s.inTx(ctx, func(q driver.Queries) error {
		// Secrets are pinned at their newest versions: a revision declares which value it uses.
		resources, err := pinSecrets(ctx, q, resources)
		if err != nil {
			return err
		}
		body, err := json.Marshal(resources)
		if err != nil {
			return err
		}
		digest := hq.DigestOf(body)
		if cur, err := latestRevision(ctx, q, name); err == nil && cur.Digest == digest {
			res.Revision = cur.Revision
			return nil
		} else if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		res.Created = true
		now := s.now()
		rev, err := q.ModuleUpsert(ctx, driver.ModuleUpsertParams{Name: name, Now: now})
		if err != nil {
			return err
		}
		res.Revision = rev
		if err := q.ModuleRevisionInsert(ctx, driver.ModuleRevisionInsertParams{
			Module: name, Revision: rev, Resources: string(body), ResourceCount: int64(len(resources)),
			Digest: digest, CreatedAt: now,
		}); err != nil {
			return err
		}
		if author := hq.Author(ctx); author != "" || message != "" {
			if err := q.ModuleRevisionSetAuthor(ctx, driver.ModuleRevisionSetAuthorParams{PushedBy: author, Message: message,
				Module: name, Revision: rev}); err != nil {
				return err
			}
		}
		if err := writeRevisionRows(ctx, q, name, rev, resources); err != nil {
			return err
		}
		if err := writeRevisionSecrets(ctx, q, name, rev, resources); err != nil {
			return err
		}
		nodes, err := assignedNodes(ctx, q, name)
		if err != nil {
			return err
		}
		// A declaration the new revision would make too large is refused first, then a template
		// some node cannot fill in, naming every such node; then
		// the paths, as each node fills them in, meet every node's other modules. The first
		// chunk of nodes moves to the new revision in this transaction (all of a small mesh),
		// the mover does the rest.
		if err := s.checkSizeOnNodes(ctx, q, name, rev, nodes); err != nil {
			return err
		}
		if err := checkRenderOnNodes(ctx, q, name, resources, nodes); err != nil {
			return err
		}
		if err := newPathCheck(name, resources).checkModule(ctx, q, nodes); err != nil {
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
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		m, err := q.ModuleGet(ctx, name)
		if err != nil {
			return notFound(err, "no module %s", name)
		}
		rev, err := q.ModuleRevisionGet(ctx, driver.ModuleRevisionGetParams{Module: name, Revision: m.Revision})
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
	err := s.inReadTx(ctx, func(q driver.Queries) error {
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

func assignedNodes(ctx context.Context, q driver.Queries, module string) ([]string, error) {
	rows, err := q.AssignmentListByModule(ctx, module)
	nodes := make([]string, 0, len(rows))
	for _, r := range rows {
		nodes = append(nodes, r.Node)
	}
	return nodes, err
}

func latestRevision(ctx context.Context, q driver.Queries, module string) (driver.ModuleRevision, error) {
	m, err := q.ModuleGet(ctx, module)
	if err != nil {
		return driver.ModuleRevision{}, err
	}
	return q.ModuleRevisionGet(ctx, driver.ModuleRevisionGetParams{Module: module, Revision: m.Revision})
}

func decodeResources(s string) ([]hq.Resource, error) {
	var rs []hq.Resource
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		return nil, fmt.Errorf("stored resources do not decode: %w", err)
	}
	return rs, nil
}

// pathCheck refuses a module whose paths overlap, on a node, with those of the node's other
// modules (paths.Overlaps): the same path twice, or a path under one that is not a directory.
// Either way hostd would undo one resource while applying the other on every reconcile, each
// reporting the other's work as drift. Containers' names are claimed beside the paths
// (hq.Resource.ContainerClaim): two resources whose containers would have one name are refused
// as two resources of one path are. Paths are compared as the node declares them: a
// templated one filled in from the node's values. One pathCheck serves one transaction and one
// module's resources; it decodes each other revision once and checks each distinct set of
// other modules once, so a new revision of a module on 10,000 alike nodes costs a few checks,
// not 10,000. Where a templated path is in play the set is told apart by what its templated
// paths render to as well, so only nodes that fill them in alike share a check, and only
// modules with templated paths pay for rendering.
type pathCheck struct {
	module string
	new    []paths.Claim
	// newTemplated says a path among new is a template.
	newTemplated bool
	refs         []string // refs[claim.ID] names the resource that makes the claim
	// templates holds, by claim ID, what a templated path is rendered from.
	templates map[int]pathTemplate
	// revs holds the claims of a module revision, keyed module@revision.
	revs map[string]revisionClaims
	// clean holds the sets of claims, as keys, already found not to overlap.
	clean map[string]bool
	// values holds the values of the nodes read so far. pending names the nodes to read, in one
	// query, the first time any node's values are needed.
	values  map[string]tmpl.Values
	pending []string
}

// pathTemplate is a resource whose path is a template, cut down to what its path renders from.
type pathTemplate struct {
	module string
	res    hq.Resource
}

// revisionClaims are the claims of a module revision.
type revisionClaims struct {
	claims    []paths.Claim
	templated bool // a path among claims is a template
}

func newPathCheck(module string, resources []hq.Resource) *pathCheck {
	p := &pathCheck{module: module, templates: map[int]pathTemplate{}, revs: map[string]revisionClaims{},
		clean: map[string]bool{}, values: map[string]tmpl.Values{}}
	p.new, p.newTemplated = p.claims(module, resources, true)
	return p
}

// claims are the paths of a module's resources, each with its ID, and whether any is a template.
func (p *pathCheck) claims(module string, resources []hq.Resource, isNew bool) ([]paths.Claim, bool) {
	cs, templated := []paths.Claim{}, false
	for _, r := range resources {
		if c, ok := r.ContainerClaim(module, len(p.refs), isNew); ok {
			p.ref(module, r.Name)
			cs = append(cs, c)
		}
		if r.Path == "" {
			continue
		}
		c := r.PathClaim(p.ref(module, r.Name), isNew)
		if templatedPath(r) {
			p.templates[c.ID] = pathTemplate{module, hq.Resource{Name: r.Name, Kind: r.Kind, Path: r.Path, Target: r.Target}}
			templated = true
		}
		cs = append(cs, c)
	}
	return cs, templated
}

// templatedPath reports whether r's path is a template.
func templatedPath(r hq.Resource) bool { return hq.Resource{Path: r.Path}.Templated() }

func (p *pathCheck) ref(module, name string) int {
	p.refs = append(p.refs, hq.Ref(module, name))
	return len(p.refs) - 1
}

// check refuses p's module on node when its paths overlap with those of the node's other modules.
func (p *pathCheck) check(ctx context.Context, q driver.Queries, node string) error {
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

// checkModule is check for every node p's module is assigned to (nodes), from one query: each
// distinct set of other modules is checked once.
func (p *pathCheck) checkModule(ctx context.Context, q driver.Queries, nodes []string) error {
	if len(p.new) == 0 {
		return nil
	}
	rows, err := q.AssignmentOthersOfModule(ctx, p.module)
	if err != nil {
		return err
	}
	p.pending = nodes
	others := map[string][]pin{}
	var order []string
	for _, r := range rows {
		if len(others[r.Node]) == 0 {
			order = append(order, r.Node)
		}
		others[r.Node] = append(others[r.Node], pin{r.Module, r.Revision})
	}
	// Filled in, a templated path may meet another of the module's own, so then a node with no
	// other module is checked too.
	if p.newTemplated {
		order = nodes
	}
	for _, n := range order {
		if err := p.against(ctx, q, n, others[n]); err != nil {
			return err
		}
	}
	return nil
}

// checkNode refuses values v for a node whose modules (pins) have templated paths, when one of
// those paths, filled in from v, would overlap another path on the node. Every templated
// claim is checked; two literal ones met when the second of them was assigned.
func (p *pathCheck) checkNode(ctx context.Context, q driver.Queries, v tmpl.Values, pins []pin) error {
	p.values[v.Node] = v
	var claims []paths.Claim
	for _, o := range pins {
		rc, err := p.revision(ctx, q, o.module, o.revision)
		if err != nil {
			return err
		}
		for _, c := range rc.claims {
			_, c.New = p.templates[c.ID]
			claims = append(claims, c)
		}
	}
	var key strings.Builder
	return p.overlaps(ctx, q, v.Node, claims, &key, true)
}

// pin is a module at the revision an assignment pins.
type pin struct {
	module   string
	revision int64
}

// against refuses p's module on node when its paths overlap with those of others there.
func (p *pathCheck) against(ctx context.Context, q driver.Queries, node string, others []pin) error {
	var key strings.Builder
	for _, o := range others {
		fmt.Fprintf(&key, "%s@%d ", o.module, o.revision)
	}
	// Only a set with no templated path is remembered by its modules alone.
	if p.clean[key.String()] {
		return nil
	}
	templated := p.newTemplated
	revs := make([][]paths.Claim, 0, len(others))
	size := len(p.new)
	for _, o := range others {
		rc, err := p.revision(ctx, q, o.module, o.revision)
		if err != nil {
			return err
		}
		templated = templated || rc.templated
		revs = append(revs, rc.claims)
		size += len(rc.claims)
	}
	claims := append(make([]paths.Claim, 0, size), p.new...)
	for _, cs := range revs {
		claims = append(claims, cs...)
	}
	return p.overlaps(ctx, q, node, claims, &key, templated)
}

// overlaps refuses claims that overlap on node, filling templated paths in first. key names
// the claims' modules; it is what a check found clean is remembered by, with what the
// templated paths render to when there are any.
func (p *pathCheck) overlaps(ctx context.Context, q driver.Queries, node string, claims []paths.Claim, key *strings.Builder, templated bool) error {
	if templated {
		v, err := p.valuesFor(ctx, q, node)
		if err != nil {
			return err
		}
		key.WriteString("|")
		if claims, err = p.render(claims, v, key); err != nil {
			return err
		}
		if p.clean[key.String()] {
			return nil
		}
	}
	if found := paths.Overlaps(claims); len(found) > 0 {
		o := found[0]
		if o.Same() && !o.Inner.New {
			o.Outer, o.Inner = o.Inner, o.Outer // the new resource is the one that declares it again
		}
		return hq.Errorf(hq.CodeConflict, "on node %s: %s", node, o.Describe(p.refs[o.Outer.ID], p.refs[o.Inner.ID]))
	}
	p.clean[key.String()] = true
	return nil
}

// render fills in the templated paths among claims (which it may change in place) from v, and
// adds what each renders to to key. A new claim that cannot be filled in (a key the node
// lacks, or a path the rule for a literal one refuses) refuses the change as it would refuse
// the module's declaration on the node. Another one is left out: it is no more declarable
// after the change than before it, and the change is not what made it so.
func (p *pathCheck) render(claims []paths.Claim, v tmpl.Values, key *strings.Builder) ([]paths.Claim, error) {
	out := claims[:0]
	for _, c := range claims {
		if t, ok := p.templates[c.ID]; ok {
			r, err := t.res.Render(v)
			if err != nil {
				if c.New {
					return nil, hq.Errorf(hq.CodeConflict, "module %s cannot be declared on node %s: %v", t.module, v.Node, err)
				}
				continue
			}
			c.Path = r.Path
			fmt.Fprintf(key, "|%d%q", c.ID, c.Path)
		}
		out = append(out, c)
	}
	return out, nil
}

// valuesFor returns the values a node's templates are filled in from: read with every pending
// node the first time, or alone.
func (p *pathCheck) valuesFor(ctx context.Context, q driver.Queries, node string) (tmpl.Values, error) {
	if v, ok := p.values[node]; ok {
		return v, nil
	}
	if len(p.pending) > 0 {
		pending := p.pending
		p.pending = nil
		rows, err := q.NodeListByNames(ctx, pending)
		if err != nil {
			return tmpl.Values{}, err
		}
		for _, n := range rows {
			if _, ok := p.values[n.Name]; !ok {
				p.values[n.Name] = valuesOf(n)
			}
		}
		if v, ok := p.values[node]; ok {
			return v, nil
		}
	}
	n, err := q.NodeGet(ctx, node)
	if err != nil {
		return tmpl.Values{}, notFound(err, "no node %s", node)
	}
	p.values[node] = valuesOf(n)
	return p.values[node], nil
}

// revision returns the claims of a stored module revision, decoding it only the first time.
func (p *pathCheck) revision(ctx context.Context, q driver.Queries, module string, revision int64) (revisionClaims, error) {
	k := fmt.Sprintf("%s@%d", module, revision)
	if rc, ok := p.revs[k]; ok {
		return rc, nil
	}
	rev, err := q.ModuleRevisionGet(ctx, driver.ModuleRevisionGetParams{Module: module, Revision: revision})
	if err != nil {
		return revisionClaims{}, err
	}
	rs, err := decodeResources(rev.Resources)
	if err != nil {
		return revisionClaims{}, err
	}
	var rc revisionClaims
	rc.claims, rc.templated = p.claims(module, rs, false)
	p.revs[k] = rc
	return rc, nil
}
