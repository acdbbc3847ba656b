package db

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/tmpl"
)

// valuesOf are the values a node's templates are filled in from.
func valuesOf(n driver.Node) tmpl.Values {
	return tmpl.Values{Node: n.Name, Labels: decodePairs(n.Labels), Vars: decodePairs(n.Vars)}
}

// render fills in the templates of a revision's resources for one node. The revision's slice
// is shared and stays as it is: only a templated resource is copied.
func render(resources []hq.Resource, v tmpl.Values) ([]hq.Resource, error) {
	left := math.MaxInt
	return renderWithin(resources, v, &left)
}

// renderWithin is render with *left the bytes the templates may render to, all resources
// together (hq.Resource.RenderWithin).
func renderWithin(resources []hq.Resource, v tmpl.Values, left *int) ([]hq.Resource, error) {
	var out []hq.Resource
	for i, r := range resources {
		if !r.Templated() {
			continue
		}
		if out == nil {
			out = append([]hq.Resource(nil), resources...)
		}
		rr, err := r.RenderWithin(v, left)
		if err != nil {
			return nil, err
		}
		out[i] = rr
	}
	if out == nil {
		return resources, nil
	}
	return out, nil
}

func templated(resources []hq.Resource) bool {
	for _, r := range resources {
		if r.Templated() {
			return true
		}
	}
	return false
}

// checkRender refuses (conflict) a module whose templates use a key the node lacks.
func checkRender(module string, resources []hq.Resource, v tmpl.Values) error {
	if _, err := render(resources, v); err != nil {
		return hq.Errorf(hq.CodeConflict, "module %s cannot be declared on node %s: %v", module, v.Node, err)
	}
	return nil
}

// checkRenderOnNodes refuses (invalid) resources whose templates use a key some of nodes lack,
// naming them: an upload is refused before any node is sent a declaration it cannot fill in.
func checkRenderOnNodes(ctx context.Context, q driver.Queries, module string, resources []hq.Resource, nodes []string) error {
	names, first, err := lackingNodes(ctx, q, resources, nodes)
	if err != nil || first == nil {
		return err
	}
	msg := fmt.Sprintf("%s with module %s cannot fill in its templates: %v", names, module, first)
	return &hq.Error{Code: hq.CodeInvalid, Message: msg, Details: []hq.FieldError{{Field: "resources", Message: msg}}}
}

// lackingNodes names the nodes, of those given, on which resources' templates cannot be filled
// in ("2 node(s) (web-2, web-3)"), with the first reason; first is nil when every one can.
func lackingNodes(ctx context.Context, q driver.Queries, resources []hq.Resource, nodes []string) (names string, first, err error) {
	if !templated(resources) || len(nodes) == 0 {
		return "", nil, nil
	}
	rows, err := q.NodeListByNames(ctx, nodes)
	if err != nil {
		return "", nil, err
	}
	var lacking []string
	for _, n := range rows {
		if _, err := render(resources, valuesOf(n)); err != nil {
			lacking = append(lacking, n.Name)
			if first == nil {
				first = err
			}
		}
	}
	if first == nil {
		return "", nil, nil
	}
	return nodeNames(lacking), first, nil
}

// checkNodeValues refuses (conflict) labels or vars that a template of a module on the node
// would need and no longer find, that would fill a templated path in to one that overlaps
// another path on the node, or that would make its declaration larger than the bound, and
// reports whether the node has templates at all: then its declaration may change with them,
// and its generation moves.
func (s *Store) checkNodeValues(ctx context.Context, q driver.Queries, v tmpl.Values) (bool, error) {
	rows, err := q.AssignmentDeclaration(ctx, v.Node)
	if err != nil {
		return false, err
	}
	pins := make([]pin, 0, len(rows))
	for _, a := range rows {
		pins = append(pins, pin{a.Module, a.Revision})
	}
	// The size first, modules a new label places on the node among them: it is worked out
	// without rendering what it bounds.
	if err := s.checkSize(ctx, q, pins, v); err != nil {
		return false, err
	}
	uses, paths := false, false
	for _, a := range rows {
		rs, err := s.resources(ctx, q, a.Module, a.Revision)
		if err != nil {
			return false, err
		}
		if !templated(rs) {
			continue
		}
		uses = true
		if err := checkRender(a.Module, rs, v); err != nil {
			return false, err
		}
		paths = paths || slices.ContainsFunc(rs, templatedPath)
	}
	if paths {
		if err := newPathCheck("", nil).checkNode(ctx, q, v, pins); err != nil {
			return false, err
		}
	}
	return uses, nil
}

// A node's declaration is bounded (Options.MaxDeclaration): what templates would make larger is
// refused at the write that would make it so, from each revision's hq.Size and the node's
// values, without rendering; composing holds to the same bound (compose).

// declarationSize is how long the node's declaration, with the modules pins pins and values
// v, encodes to.
func (s *Store) declarationSize(ctx context.Context, q driver.Queries, pins []pin, v tmpl.Values) (int, error) {
	total := 0
	for _, p := range pins {
		sz, err := s.size(ctx, q, p.module, p.revision)
		if err != nil {
			return 0, err
		}
		total += sz.For(v)
	}
	return total, nil
}

// tooLarge says that a node's declaration would be size bytes, past the bound.
func (s *Store) tooLarge(node string, size int) string {
	return fmt.Sprintf("node %s would be declared %s of resources, more than the %s a declaration may be", node, byteCount(size), byteCount(s.opt.MaxDeclaration))
}

// checkSize refuses (conflict) a change that would make the node's declaration, with pins and
// values v, larger than the bound.
func (s *Store) checkSize(ctx context.Context, q driver.Queries, pins []pin, v tmpl.Values) error {
	size, err := s.declarationSize(ctx, q, pins, v)
	if err == nil && size > s.opt.MaxDeclaration {
		err = hq.Errorf(hq.CodeConflict, "%s", s.tooLarge(v.Node, size))
	}
	return err
}

// checkNodeSize is checkSize for the modules the node has now and its values.
func (s *Store) checkNodeSize(ctx context.Context, q driver.Queries, node string) error {
	n, err := q.NodeGet(ctx, node)
	if err != nil {
		return err
	}
	rows, err := q.AssignmentDeclaration(ctx, node)
	if err != nil {
		return err
	}
	pins := make([]pin, 0, len(rows))
	for _, r := range rows {
		pins = append(pins, pin{r.Module, r.Revision})
	}
	return s.checkSize(ctx, q, pins, valuesOf(n))
}

// oversized names the nodes, of those given, whose declaration would pass the bound with
// module at revision rev beside the other modules each has (others, by node); first says the
// first of them. Values are read only when a revision in play has templates.
func (s *Store) oversized(ctx context.Context, q driver.Queries, module string, rev int64, nodes []string, others map[string][]pin) (names, first string, err error) {
	own, err := s.size(ctx, q, module, rev)
	if err != nil || len(nodes) == 0 {
		return "", "", err
	}
	templated := own.Templated()
	for _, ps := range others {
		for _, p := range ps {
			sz, err := s.size(ctx, q, p.module, p.revision)
			if err != nil {
				return "", "", err
			}
			templated = templated || sz.Templated()
		}
	}
	values := map[string]tmpl.Values{}
	if templated {
		rows, err := q.NodeListByNames(ctx, nodes)
		if err != nil {
			return "", "", err
		}
		for _, n := range rows {
			values[n.Name] = valuesOf(n)
		}
	}
	var over []string
	for _, n := range nodes {
		v, ok := values[n]
		if !ok {
			v = tmpl.Values{Node: n}
		}
		size, err := s.declarationSize(ctx, q, others[n], v)
		if err != nil {
			return "", "", err
		}
		if size += own.For(v); size > s.opt.MaxDeclaration {
			over = append(over, n)
			if first == "" {
				first = s.tooLarge(n, size)
			}
		}
	}
	if len(over) == 0 {
		return "", "", nil
	}
	return nodeNames(over), first, nil
}

// checkSizeOnNodes refuses (invalid) a new revision of module that would make the declaration
// of any of nodes, which have the module, larger than the bound, naming them.
func (s *Store) checkSizeOnNodes(ctx context.Context, q driver.Queries, module string, rev int64, nodes []string) error {
	if len(nodes) == 0 {
		return nil
	}
	rows, err := q.AssignmentOthersOfModule(ctx, module)
	if err != nil {
		return err
	}
	others := map[string][]pin{}
	for _, r := range rows {
		others[r.Node] = append(others[r.Node], pin{r.Module, r.Revision})
	}
	names, first, err := s.oversized(ctx, q, module, rev, nodes, others)
	if err != nil || names == "" {
		return err
	}
	msg := fmt.Sprintf("%s with module %s would be declared more than %s: %s", names, module, byteCount(s.opt.MaxDeclaration), first)
	return &hq.Error{Code: hq.CodeInvalid, Message: msg, Details: []hq.FieldError{{Field: "resources", Message: msg}}}
}

// nodeNames names nodes in a message: "2 node(s) (web-2, web-3)", the first ten and how many
// more.
func nodeNames(nodes []string) string {
	names := strings.Join(nodes[:min(len(nodes), 10)], ", ")
	if len(nodes) > 10 {
		names += fmt.Sprintf(" and %d more", len(nodes)-10)
	}
	return fmt.Sprintf("%d node(s) (%s)", len(nodes), names)
}

// byteCount says a size the way the bound is said: in MiB or KiB, or bytes.
func byteCount(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
