package hq

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Hold is one resource the node refused to touch, with the node's own reason.
type Hold struct {
	Module   string `json:"module"`
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
	// Found is what hostd found in a held file, which Take would overwrite, as its last report
	// said (GET /nodes/{node} only): nil when it did not say. The holds of one answer carry at
	// most MaxHeldFound of content together; past it, Found says FoundTooMany.
	Found *FoundFile `json:"found,omitempty"`
}

// WaitingOnTake is a module whose resources a node holds until it is taken.
type WaitingOnTake struct {
	Node   string `json:"node"`
	Module string `json:"module"`
	Held   int    `json:"held"`
}

// HeldCounts counts held resources per module. The report line, a node's lines and the mesh
// summary all list it the same way: by count, highest first, then by module name.
type HeldCounts map[string]int

// CountHolds counts holds per module.
func CountHolds(holds []Hold) HeldCounts {
	h := HeldCounts{}
	for _, x := range holds {
		h[x.Module]++
	}
	return h
}

// Total is the number of held resources.
func (h HeldCounts) Total() int {
	n := 0
	for _, c := range h {
		n += c
	}
	return n
}

// Modules lists the modules with holds by count, highest first, then by name.
func (h HeldCounts) Modules() []string {
	return sortedByCount(h)
}

// String is "route-proxy: 13, mailu: 3".
func (h HeldCounts) String() string {
	mods := h.Modules()
	parts := make([]string, len(mods))
	for i, m := range mods {
		parts[i] = fmt.Sprintf("%s: %d", m, h[m])
	}
	return strings.Join(parts, ", ")
}

// sortedByCount returns the keys of m by count, highest first, then by name.
func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	return keys
}
