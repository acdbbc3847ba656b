package db

import (
	"context"
	"fmt"
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
	var out []hq.Resource
	for i, r := range resources {
		if !r.Templated() {
			continue
		}
		if out == nil {
			out = append([]hq.Resource(nil), resources...)
		}
		rr, err := r.Render(v)
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
	names = strings.Join(lacking[:min(len(lacking), 10)], ", ")
	if len(lacking) > 10 {
		names += fmt.Sprintf(" and %d more", len(lacking)-10)
	}
	return fmt.Sprintf("%d node(s) (%s)", len(lacking), names), first, nil
}

// checkNodeValues refuses (conflict) labels or vars that a template of a module on the node
// would need and no longer find, or that would fill a templated path in to one that overlaps
// another path on the node, and reports whether the node has templates at all: then its
// declaration may change with them, and its generation moves.
func (s *Store) checkNodeValues(ctx context.Context, q driver.Queries, v tmpl.Values) (bool, error) {
	rows, err := q.AssignmentDeclaration(ctx, v.Node)
	if err != nil {
		return false, err
	}
	uses, paths := false, false
	pins := make([]pin, 0, len(rows))
	for _, a := range rows {
		pins = append(pins, pin{a.Module, a.Revision})
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
