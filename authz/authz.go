// Package authz is who may do what: the roles each need is granted to, the one table of every
// route's need (table.go), and the scopes a deployer's binding is bounded by. The API and the
// pages both ask it; a route missing from the table is refused.
package authz

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/selector"
)

// Need is what a route asks of its caller.
type Need string

const (
	// Open: anyone (health, the controller's public key, the sign-in form).
	Open Need = "open"
	// Node: a node's own calls (its declaration, its reports); an operator may read a
	// declaration too. A node is never an operator.
	Node Need = "node"
	// Read: any operator.
	Read Need = "read"
	// Deploy: changes to modules, assignments, labels, vars, placements, rollouts, retries.
	Deploy Need = "deploy"
	// Admin: operators, node registration and deletion, the signing key. Secrets are admin's
	// too: their routes add a Need here, or use Admin.
	Admin Need = "admin"
)

// grants is, per role, the needs it meets. A new need is a new line here and entries in the
// table; nothing else changes.
var grants = map[hq.Role][]Need{
	hq.RoleViewer:   {Read},
	hq.RoleDeployer: {Read, Deploy},
	hq.RoleAdmin:    {Read, Deploy, Admin},
}

// Grants reports whether role meets need.
func Grants(role hq.Role, need Need) bool {
	return slices.Contains(grants[role], need)
}

// neededRole is the least role that meets need, for a refusal to name.
func neededRole(need Need) hq.Role {
	for _, r := range hq.Roles {
		if Grants(r, need) {
			return r
		}
	}
	return hq.RoleAdmin
}

// Scope is what of a write a deployer's bounds are checked against.
type Scope int

const (
	// NoScope: the route names nothing a binding bounds (or only an admin may call it).
	NoScope Scope = iota
	// ModuleScope: the {module} of the path.
	ModuleScope
	// NodeScope: the {node} of the path, by its labels now.
	NodeScope
	// NodeModuleScope: both.
	NodeModuleScope
	// RolloutScope: the {rollout}'s module, and its placement's selector.
	RolloutScope
	// PlacementScope: the {placement}'s module and selector, as it is now.
	PlacementScope
	// BodyScope: what the request's body names; the handler checks it (CheckPlacement,
	// CheckLabels) once it has read the body, the module and the node of the path besides.
	BodyScope
)

// Rule is one route's entry in the table: what it needs, and for a write what the audit log
// calls it (Action, e.g. module.push) and what it acts on (Object, a pattern such as
// "module/{module}" whose {names} are the route's parameters).
type Rule struct {
	Need   Need
	Action string
	Object string
	Scope  Scope
}

// Lookup returns the rule of a route, by its method and chi pattern.
func Lookup(method, pattern string) (Rule, bool) {
	r, ok := Table[method+" "+pattern]
	return r, ok
}

// ObjectOf fills in the rule's object from the route's parameters.
func (r Rule) ObjectOf(param func(string) string) string {
	var b strings.Builder
	rest := r.Object
	for {
		i := strings.IndexByte(rest, '{')
		j := strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i])
		b.WriteString(param(rest[i+1 : j]))
		rest = rest[j+1:]
	}
}

// Role refuses an identity whose role does not meet the rule's need: forbidden, naming both.
func (r Rule) Role(id hq.Identity) error {
	if Grants(id.Role, r.Need) {
		return nil
	}
	what := r.Action
	if what == "" {
		what = "this"
	}
	return hq.Errorf(hq.CodeForbidden, "%s is a %s: %s needs %s", id.Operator, id.Role, what, neededRole(r.Need))
}

// Targets is what the scope checks read: the node's labels, a rollout's module and
// placement, a placement's module and selector.
type Targets interface {
	GetNode(ctx context.Context, name string) (hq.NodeView, error)
	GetRollout(ctx context.Context, id int64) (hq.Rollout, error)
	GetPlacement(ctx context.Context, name string) (hq.Placement, error)
}

// Check refuses a write outside the identity's scope, by the rule's Scope, the route's
// parameters giving what it names. An unscoped identity passes at once; a target that does
// not exist passes too, for the handler to answer not found.
func (r Rule) Check(ctx context.Context, t Targets, id hq.Identity, param func(string) string) error {
	if !id.Scoped() || r.Need == Read {
		return nil
	}
	switch r.Scope {
	case ModuleScope:
		return CheckModule(id, param("module"))
	case NodeScope, BodyScope:
		if node := param("node"); node != "" {
			if err := checkNode(ctx, t, id, node); err != nil {
				return err
			}
		}
		if m := param("module"); m != "" {
			return CheckModule(id, m)
		}
	case NodeModuleScope:
		if err := CheckModule(id, param("module")); err != nil {
			return err
		}
		return checkNode(ctx, t, id, param("node"))
	case RolloutScope:
		n, err := strconv.ParseInt(param("rollout"), 10, 64)
		if err != nil {
			return nil // the handler refuses a bad id
		}
		ro, err := t.GetRollout(ctx, n)
		if err != nil {
			return ignoreMissing(err)
		}
		if err := CheckModule(id, ro.Module); err != nil {
			return err
		}
		return checkPlacementNamed(ctx, t, id, ro.Placement)
	case PlacementScope:
		return checkPlacementNamed(ctx, t, id, param("placement"))
	}
	return nil
}

func ignoreMissing(err error) error {
	if hq.ErrorCode(err) == hq.CodeNotFound {
		return nil
	}
	return err
}

func checkPlacementNamed(ctx context.Context, t Targets, id hq.Identity, name string) error {
	p, err := t.GetPlacement(ctx, name)
	if err != nil {
		return ignoreMissing(err)
	}
	return CheckPlacement(id, p.Module, p.Selector)
}

func checkNode(ctx context.Context, t Targets, id hq.Identity, node string) error {
	if id.Nodes == "" {
		return nil
	}
	n, err := t.GetNode(ctx, node)
	if err != nil {
		return ignoreMissing(err)
	}
	return CheckLabels(id, node, n.Labels)
}

// CheckModule refuses a module outside the identity's modules.
func CheckModule(id hq.Identity, module string) error {
	if hq.ModuleInScope(id.Modules, module) {
		return nil
	}
	return hq.Errorf(hq.CodeForbidden, "%s may change modules %s only, not %s", id.Operator, id.Modules, module)
}

// CheckLabels refuses a node, with these labels, outside the identity's nodes: a node whose
// labels a deployer sets must be in scope before and after.
func CheckLabels(id hq.Identity, node string, labels map[string]string) error {
	if id.Nodes == "" {
		return nil
	}
	sel, err := selector.Parse(id.Nodes)
	if err == nil && sel.Matches(labels) {
		return nil
	}
	return hq.Errorf(hq.CodeForbidden, "%s may change nodes %s only, not node %s", id.Operator, id.Nodes, node)
}

// CheckPlacement refuses a placement outside the identity's scope: its module must be in the
// modules, and its selector must hold every term of the nodes' selector, so that every node it
// matches, now or once labels change, is in scope. (Matching the nodes there are now would let
// a label set later carry the placement outside.)
func CheckPlacement(id hq.Identity, module, sel string) error {
	if err := CheckModule(id, module); err != nil {
		return err
	}
	if id.Nodes == "" {
		return nil
	}
	scope, err1 := selector.Parse(id.Nodes)
	got, err2 := selector.Parse(sel)
	if err1 == nil && err2 == nil && includes(got, scope) {
		return nil
	}
	return hq.Errorf(hq.CodeForbidden, "%s may change nodes %s only: a placement's selector must include %s, not %q", id.Operator, id.Nodes, id.Nodes, sel)
}

// includes reports whether every term of want is a term of s.
func includes(s, want selector.Selector) bool {
	for _, w := range want.Terms {
		if !slices.ContainsFunc(s.Terms, func(t selector.Term) bool { return sameTerm(t, w) }) {
			return false
		}
	}
	return true
}

func sameTerm(a, b selector.Term) bool {
	if a.Key != b.Key || a.Op != b.Op {
		return false
	}
	x, y := slices.Clone(a.Values), slices.Clone(b.Values)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
