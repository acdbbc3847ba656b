package db

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/selector"
)

// The fleet is counted by status in the database; each node's status is hq.StatusOf of its
// row. The two agree on a node in every status, and at the edge of silence, to the nanosecond
// of the controller's clock against report times kept to the millisecond.
func TestFleetCountsAreStatusOfEachNode(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("conf", "x"), file("ok", "y"))
	mustModule(t, s, "more", file("extra", "z"))
	report := func(node string, results ...hq.Result) {
		t.Helper()
		d, err := s.Compose(ctx, node, "test")
		if err != nil {
			t.Fatal(err)
		}
		ingest(t, s, node, d, results...)
	}
	for _, n := range []string{"new", "silent", "edge", "stuck", "degraded", "mid-change", "held", "converged"} {
		mustNode(t, s, n)
		if n != "new" {
			mustAssign(t, s, n, "app")
		}
	}
	fine := applied("app", "conf", "ok")
	report("silent", fine...)
	c.Advance(time.Millisecond)
	report("edge", fine...)
	c.Advance(s.opt.SilentAfter - time.Millisecond + 400*time.Microsecond)
	for range 3 {
		report("stuck", failing("app", "conf"), fine[1])
	}
	report("degraded", failing("app", "conf"), fine[1])
	report("mid-change", fine...)
	mustAssign(t, s, "mid-change", "more")
	report("held", hq.Result{Module: "app", Resource: "conf", Outcome: hq.StateHeld, HoldReason: "exists, not taken"}, fine[1])
	report("converged", fine...)

	compare := func(when string, want map[hq.Status]int) {
		t.Helper()
		var got fleet
		perNode := map[hq.Status]int{}
		named := map[hq.Status][]string{}
		err := s.inReadTx(ctx, func(q driver.Queries) error {
			var err error
			if got, err = fleetCounts(ctx, q, s.silentBefore()); err != nil {
				return err
			}
			nodes, err := q.NodeStatusList(ctx)
			for _, n := range nodes {
				st := s.nodeStatus(n, s.clock())
				perNode[st]++
				named[st] = append(named[st], n.Name)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// A listing by status picks in the database what each node's status says, and one
		// that also matches by name (read row by row) picks the same; the mesh page's pages,
		// which it counts from MeshStatus, follow one another.
		for _, st := range hq.Statuses {
			for _, f := range []NodeFilter{{Status: st}, {Status: st, Match: func(string) bool { return true }}} {
				page, err := s.ListNodes(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, v := range page.Nodes {
					names = append(names, v.Name)
				}
				if !slices.Equal(names, named[st]) || !maps.Equal(page.Counts, perNode) {
					t.Errorf("%s: listed %s: %v counted %v, want %v counted %v", when, st, names, page.Counts, named[st], perNode)
				}
			}
		}
		var needLook []string
		for _, n := range []string{"converged", "degraded", "edge", "held", "mid-change", "new", "silent", "stuck"} {
			if st := statusIn(named, n); st != hq.StatusConverged {
				needLook = append(needLook, n)
			}
		}
		var pages []string
		for after := ""; ; {
			page, err := s.ListNodes(ctx, NodeFilter{NotConverged: true, Limit: 2, After: after, Uncounted: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Counts) != 0 || page.Total != 0 {
				t.Errorf("%s: an uncounted page counted %v (total %d)", when, page.Counts, page.Total)
			}
			for _, v := range page.Nodes {
				pages = append(pages, v.Name)
			}
			if after = page.Next; after == "" {
				break
			}
		}
		if !slices.Equal(pages, needLook) {
			t.Errorf("%s: pages of two of the nodes that need a look: %v, want %v", when, pages, needLook)
		}
		// By severity, in the database and row by row, every node in hq.BySeverity's order,
		// a page of three at a time: the two rankings and hq.Severity agree.
		var bySeverity []string
		for _, st := range hq.BySeverity {
			bySeverity = append(bySeverity, named[st]...)
		}
		for _, match := range []func(string) bool{nil, func(string) bool { return true }} {
			if got := severityPages(t, s, NodeFilter{BySeverity: true, Limit: 3, Match: match}); !slices.Equal(got, bySeverity) {
				t.Errorf("%s: by severity (matched %t): %v, want %v", when, match != nil, got, bySeverity)
			}
		}
		if !maps.Equal(got.nodes, perNode) || got.total != 8 {
			t.Errorf("%s: counted %v (total %d), each node's status %v", when, got.nodes, got.total, perNode)
		}
		if !maps.Equal(perNode, want) {
			t.Errorf("%s: statuses %v, want %v", when, perNode, want)
		}
	}
	all := map[hq.Status]int{hq.StatusNew: 1, hq.StatusSilent: 1, hq.StatusConverged: 2, hq.StatusStuck: 1,
		hq.StatusDegraded: 1, hq.StatusMidChange: 1, hq.StatusWaitingOnTake: 1}
	compare("silent by 0.4 ms", all)
	c.Advance(600 * time.Microsecond)
	compare("edge at exactly the limit", all)
	c.Advance(time.Nanosecond)
	all[hq.StatusSilent], all[hq.StatusConverged] = 2, 1
	compare("edge past it by a nanosecond", all)

	f, err := s.Figures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 7 nodes of app's 2 resources and mid-change's 1 of more: 2 stuck or failed or held, 1 pending.
	want := map[hq.State]int{hq.StateApplied: 11, hq.StatePending: 1, hq.StateFailed: 1, hq.StateStuck: 1,
		hq.StateHeld: 1, hq.StateGroupedPending: 0}
	if !maps.Equal(f.Resources, want) {
		t.Errorf("resources by state %v, want %v", f.Resources, want)
	}
}

// statusIn says which status of named lists node.
func statusIn(named map[hq.Status][]string, node string) hq.Status {
	for st, names := range named {
		if slices.Contains(names, node) {
			return st
		}
	}
	return ""
}

// severityPages lists every page of f, three nodes a page, and returns the names in order.
func severityPages(t *testing.T, s *Store, f NodeFilter) []string {
	t.Helper()
	var names []string
	for f.After = ""; ; {
		page, err := s.ListNodes(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Nodes {
			names = append(names, v.Name)
		}
		if f.After = page.Next; f.After == "" {
			return names
		}
	}
}

// A node that needs a look more than hundreds of others comes first on the first page, by
// selector or not; a selector's listing counts only the nodes it matches.
func TestNodesBySeverityFirstPage(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	ctx := context.Background()
	mustModule(t, s, "app", file("conf", "x"))
	web := map[string]string{"role": "web"}
	for i := range 300 {
		if _, _, err := s.CreateLabelledNode(ctx, fmt.Sprintf("a-%03d", i), web); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.CreateLabelledNode(ctx, "z-degraded", web); err != nil {
		t.Fatal(err)
	}
	mustAssign(t, s, "z-degraded", "app")
	d, err := s.Compose(ctx, "z-degraded", "test")
	if err != nil {
		t.Fatal(err)
	}
	ingest(t, s, "z-degraded", d, failing("app", "conf"))
	sel, err := selector.Parse("role=web")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []NodeFilter{{NotConverged: true}, {NotConverged: true, Selector: &sel}} {
		f.BySeverity, f.Limit = true, 200
		page, err := s.ListNodes(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Nodes) != 200 || page.Nodes[0].Name != "z-degraded" || page.Nodes[1].Name != "a-000" {
			t.Fatalf("selector %t: first page %d node(s), starting %v", f.Selector != nil, len(page.Nodes), names(page.Nodes[:2]))
		}
		if page.Next != "new:a-198" {
			t.Errorf("selector %t: next %q, want new:a-198", f.Selector != nil, page.Next)
		}
		if f.Selector != nil && (page.Total != 301 || page.Counts[hq.StatusNew] != 300 || page.Counts[hq.StatusDegraded] != 1) {
			t.Errorf("selected counts %v (total %d)", page.Counts, page.Total)
		}
		if got := severityPages(t, s, f); len(got) != 301 || got[300] != "a-299" {
			t.Errorf("selector %t: pages list %d node(s)", f.Selector != nil, len(got))
		}
	}
	if _, _, err := s.CreateLabelledNode(ctx, "db-1", map[string]string{"role": "db"}); err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]map[string]int{"role=web": {"total": 301, "new": 300, "degraded": 1}, "role=db": {"total": 1, "new": 1}} {
		parsed, err := selector.Parse(sel)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.MeshStatusOf(ctx, &parsed)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(st.Nodes, want) {
			t.Errorf("mesh status of %s counts %v, want %v", sel, st.Nodes, want)
		}
	}
	if _, err := s.ListNodes(ctx, NodeFilter{BySeverity: true, After: "web-1"}); hq.ErrorCode(err) != hq.CodeBadRequest {
		t.Errorf("a cursor without a status: %v, want bad_request", err)
	}
}

func names(vs []hq.NodeView) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}
