// Package paths is the overlap rule for the paths declared on one node: a path is declared at
// most once, and only a directory may have other declared paths under it. Anything else above a
// declared path (an absent, a file, a symlink) would make hostd undo one resource while applying
// the other on every reconcile. The rule knows paths and which of them are directories, nothing
// of resources, so module validation, the store and hostd all hold nodes to the one rule.
//
// A claim may also be of a name that only one resource of a node may have, such as a
// container's: written without a leading '/', it lies under no path and holds none, and meets
// only its equal.
package paths

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Claim is one path a resource declares on a node.
type Claim struct {
	Path string
	// Dir marks a directory's claim: the only one that may have other claims under it.
	Dir bool
	// Kind is what the claim declares its path as, named in Describe's message.
	Kind string
	// New marks the claims being checked. A pair of claims neither of which is new is not
	// reported, so an overlap stored before the rule existed does not refuse every later change
	// to the node; it is refused again only when one of its resources changes.
	New bool
	// ID is the caller's handle on the resource that makes the claim.
	ID int
}

// Overlap is two claims that may not share a node: Inner's path is Outer's, or lies under it
// while Outer is not a directory.
type Overlap struct{ Outer, Inner Claim }

// Same reports whether the two claims are of one path.
func (o Overlap) Same() bool { return o.Outer.Path == o.Inner.Path }

// Describe says what is wrong, naming the two resources as outer and inner name them.
func (o Overlap) Describe(outer, inner string) string {
	if o.Same() {
		return fmt.Sprintf("%s declares %s, which %s already declares", inner, o.Inner.Path, outer)
	}
	return fmt.Sprintf("%s declares %s, under %s, which %s declares as %s; only a directory may have declared paths under it",
		inner, o.Inner.Path, o.Outer.Path, outer, o.Outer.Kind)
}

// Overlaps sorts claims in place and returns every overlap that involves a new claim: at
// most one per claim, naming the nearest path above it that may not hold it. It costs one sort
// and one walk with a stack of the paths above the current one, never a comparison of every
// pair, so it serves a node of thousands of paths as well as a module of a few.
func Overlaps(claims []Claim) []Overlap {
	// Sorted with '/' below every other byte, the paths under P follow P with nothing between:
	// "/a", "/a/b", "/a/b/c", "/a-b" rather than "/a", "/a-b", "/a/b".
	slices.SortFunc(claims, func(a, b Claim) int {
		return cmp.Or(comparePaths(a.Path, b.Path), cmp.Compare(a.ID, b.ID))
	})
	// above is an open path with the nearest claim on or above it that is not a directory, of
	// any claim and of a new one: -1 when there is none.
	type above struct {
		path            string
		outer, newOuter int
	}
	var out []Overlap
	var stack []above
	for i, c := range claims {
		if i > 0 && claims[i-1].Path == c.Path {
			if prev := claims[i-1]; prev.New || c.New {
				out = append(out, Overlap{Outer: prev, Inner: c})
			}
			// The path is open already; what lies under it must also fit under this claim.
			top := &stack[len(stack)-1]
			if !c.Dir && top.outer < 0 {
				top.outer = i
			}
			if !c.Dir && c.New && top.newOuter < 0 {
				top.newOuter = i
			}
			continue
		}
		for len(stack) > 0 && !under(c.Path, stack[len(stack)-1].path) {
			stack = stack[:len(stack)-1]
		}
		outer, newOuter := -1, -1
		if len(stack) > 0 {
			outer, newOuter = stack[len(stack)-1].outer, stack[len(stack)-1].newOuter
		}
		switch {
		case c.New && outer >= 0:
			out = append(out, Overlap{Outer: claims[outer], Inner: c})
		case !c.New && newOuter >= 0:
			out = append(out, Overlap{Outer: claims[newOuter], Inner: c})
		}
		if !c.Dir {
			outer = i
			if c.New {
				newOuter = i
			}
		}
		stack = append(stack, above{path: c.Path, outer: outer, newOuter: newOuter})
	}
	return out
}

// under reports whether p lies strictly under the directory dir.
func under(p, dir string) bool {
	return len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir)
}

// comparePaths orders paths byte by byte with '/' before every other byte.
func comparePaths(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return cmp.Compare(pathByte(a[i]), pathByte(b[i]))
		}
	}
	return cmp.Compare(len(a), len(b))
}

func pathByte(c byte) int {
	if c == '/' {
		return -1
	}
	return int(c)
}
