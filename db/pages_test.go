package db

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

func TestParseNodeFilter(t *testing.T) {
	sel := func(s string) *string { return &s }
	for _, tc := range []struct {
		status   string
		selector *string
		want     func(NodeFilter) bool
		code     hq.Code
	}{
		{"", nil, func(f NodeFilter) bool { return f.Status == "" && !f.NotConverged && f.Selector == nil }, ""},
		{"stuck", nil, func(f NodeFilter) bool { return f.Status == hq.StatusStuck }, ""},
		{"not-converged", nil, func(f NodeFilter) bool { return f.NotConverged && f.Status == "" }, ""},
		{"", sel("role=web,region in (eu,us)"), func(f NodeFilter) bool {
			return f.Selector != nil && f.Selector.Matches(map[string]string{"role": "web", "region": "eu"}) &&
				!f.Selector.Matches(map[string]string{"role": "web", "region": "ap"})
		}, ""},
		{"", sel(""), func(f NodeFilter) bool { return f.Selector != nil && len(f.Selector.Terms) == 0 }, ""},
		{"asleep", nil, nil, hq.CodeBadRequest},
		{"", sel("role in web"), nil, hq.CodeInvalid},
	} {
		f, err := ParseNodeFilter(tc.status, tc.selector)
		if tc.code != "" {
			if hq.ErrorCode(err) != tc.code {
				t.Errorf("ParseNodeFilter(%q, %v): %v, want %s", tc.status, tc.selector, err, tc.code)
			}
			continue
		}
		if err != nil || !tc.want(f) {
			t.Errorf("ParseNodeFilter(%q, %v) = %+v, %v", tc.status, tc.selector, f, err)
		}
	}
}

// The history counts each node by the report row current at each moment: converged while that
// row has every resource applied and the node is not silent, from its first report until it is
// deleted.
func TestConvergedHistory(t *testing.T) {
	s, c := setupWith(t, Options{})
	ctx := context.Background()
	mustModule(t, s, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "1\n"})
	for _, n := range []string{"ok", "late", "gone", "quiet", "never"} {
		mustNode(t, s, n)
		mustAssign(t, s, n, "app")
	}
	t0 := c.now()
	report(t, s, "ok", true)
	report(t, s, "late", false)
	report(t, s, "gone", true)
	report(t, s, "quiet", true)
	c.advance(time.Hour)
	report(t, s, "ok", true) // a repeat: the row of t0 stands on, to now
	report(t, s, "late", true)
	report(t, s, "gone", true)
	c.advance(time.Hour)
	report(t, s, "ok", true)
	report(t, s, "late", true)
	if _, err := s.DeleteNode(ctx, "gone", nil); err != nil {
		t.Fatal(err)
	}
	// Every 31 minutes from a minute before the first report.
	step := 31 * time.Minute
	got, err := s.ConvergedHistory(ctx, t0.Add(-time.Minute), step, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"0 converged, 0 not", // before any report; never never reports
		"2 converged, 2 not", // t0+30m: late failed; quiet silent since t0+3m
		"3 converged, 1 not", // t0+61m: late applied at t0+60m
		"2 converged, 2 not", // t0+92m: gone silent since t0+63m
		"2 converged, 1 not", // t0+123m: gone deleted at t0+120m; ok's last repeat at t0+120m, silent only after t0+123m
	}
	if len(got) != len(want) {
		t.Fatalf("%d moments, want %d: %+v", len(got), len(want), got)
	}
	for i, g := range got {
		at := t0.Add(-time.Minute + time.Duration(i)*step)
		if s := fmt.Sprintf("%d converged, %d not", g.Converged, g.NotConverged); s != want[i] || !g.At.Equal(at) {
			t.Errorf("moment %d (%s): %s at %s, want %s", i, at, s, g.At, want[i])
		}
	}
	if _, err := s.ConvergedHistory(ctx, t0, 0, 5); hq.ErrorCode(err) != hq.CodeBadRequest {
		t.Errorf("a history of no step: %v", err)
	}
}

func TestPageRolloutsAndTheirHistory(t *testing.T) {
	s, _ := setupSteppingRollouts(t)
	ctx := context.Background()
	mustModule(t, s, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "1"})
	for _, n := range []string{"web-1", "web-2"} {
		mustLabelled(t, s, n, map[string]string{"role": "web"})
	}
	for _, p := range []string{"a", "b"} {
		if _, err := s.PutPlacement(ctx, hq.Placement{Name: p, Module: "app", Selector: "role=web", Rollout: &hq.RolloutPolicy{Canary: 1}}); err != nil && p == "a" {
			t.Fatal(err)
		}
	}
	for rev := 2; rev <= 4; rev++ {
		mustModule(t, s, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: fmt.Sprint(rev)})
	}
	// Each revision superseded the rollout before: 1 and 2 aborted, 3 progressing.
	page, err := s.PageRollouts(ctx, RolloutFilter{Limit: 2})
	if err != nil || len(page.Rollouts) != 2 || page.Rollouts[0].ID != 3 || page.Rollouts[1].ID != 2 || page.Next != 2 {
		t.Fatalf("first page %+v, %v", page, err)
	}
	page, err = s.PageRollouts(ctx, RolloutFilter{Before: page.Next, Limit: 2})
	if err != nil || len(page.Rollouts) != 1 || page.Rollouts[0].ID != 1 || page.Next != 0 {
		t.Fatalf("second page %+v, %v", page, err)
	}
	page, err = s.PageRollouts(ctx, RolloutFilter{State: hq.RolloutAborted, Module: "app", Placement: "a", Limit: 10})
	if err != nil || len(page.Rollouts) != 2 || page.Rollouts[0].Reason != "superseded by revision 4" {
		t.Fatalf("aborted of a: %+v, %v", page, err)
	}
	if page, err := s.PageRollouts(ctx, RolloutFilter{Placement: "none", Limit: 10}); err != nil || len(page.Rollouts) != 0 {
		t.Fatalf("of no placement: %+v, %v", page, err)
	}
	trs, err := s.RolloutTransitions(ctx, 2)
	if err != nil || len(trs) != 2 || trs[0].From != "" || trs[0].To != hq.RolloutProgressing ||
		trs[1].From != hq.RolloutProgressing || trs[1].To != hq.RolloutAborted || trs[1].Reason != "superseded by revision 4" {
		t.Fatalf("history of rollout 2: %+v, %v", trs, err)
	}
	latest, err := s.LatestRollouts(ctx, []string{"a", "b"})
	if err != nil || len(latest) != 1 || latest["a"].ID != 3 {
		t.Fatalf("latest: %+v, %v", latest, err)
	}
}

func TestPageModulesPlacementsAndRevisions(t *testing.T) {
	s, _ := setupWith(t, Options{})
	ctx := context.Background()
	for _, m := range []string{"a", "b", "c"} {
		mustModule(t, s, m, hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/" + m + ".conf", Content: "1\n"})
	}
	mustModule(t, s, "b", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/b.conf", Content: "2\n"})
	mustLabelled(t, s, "web-1", map[string]string{"role": "web"})
	mustNode(t, s, "db-1")
	mustAssign(t, s, "db-1", "b")
	for _, p := range []string{"p1", "p2", "p3"} {
		if _, err := s.PutPlacement(ctx, hq.Placement{Name: p, Module: map[string]string{"p1": "a", "p2": "c", "p3": "c"}[p], Selector: "role=web"}); err != nil && p != "p3" {
			t.Fatal(err)
		}
	}

	mods, err := s.PageModules(ctx, "", 2)
	if err != nil || len(mods.Modules) != 2 || mods.Next != "b" {
		t.Fatalf("modules: %+v, %v", mods, err)
	}
	if b := mods.Modules[1]; b.Name != "b" || b.Revision != 2 || b.Nodes != 1 || b.Placements != 0 {
		t.Fatalf("module b: %+v", b)
	}
	mods, err = s.PageModules(ctx, mods.Next, 2)
	if err != nil || len(mods.Modules) != 1 || mods.Next != "" || mods.Modules[0].Placements != 1 {
		t.Fatalf("modules after b: %+v, %v", mods, err)
	}
	if m, err := s.GetModuleSummary(ctx, "a"); err != nil || m.Nodes != 1 || m.Placements != 1 {
		t.Fatalf("summary of a: %+v, %v", m, err)
	}
	if _, err := s.GetModuleSummary(ctx, "z"); !isNotFound(err) {
		t.Fatalf("summary of z: %v", err)
	}

	pls, err := s.PagePlacements(ctx, "", 1)
	if err != nil || len(pls.Placements) != 1 || pls.Placements[0].Name != "p1" || pls.Placements[0].Matched != 1 || pls.Next != "p1" {
		t.Fatalf("placements: %+v, %v", pls, err)
	}
	if pls, err = s.PagePlacements(ctx, pls.Next, 5); err != nil || len(pls.Placements) != 1 || pls.Next != "" {
		t.Fatalf("placements after p1: %+v, %v", pls, err)
	}
	if ofC, err := s.PlacementsOfModule(ctx, "c"); err != nil || len(ofC) != 1 || ofC[0].Name != "p2" {
		t.Fatalf("placements of c: %+v, %v", ofC, err)
	}
	if nodes, err := s.AssignedNodes(ctx, "b"); err != nil || len(nodes) != 1 || nodes[0] != "db-1" {
		t.Fatalf("nodes of b: %v, %v", nodes, err)
	}

	revs, err := s.PageRevisions(ctx, "b", 0, 1)
	if err != nil || len(revs.Revisions) != 1 || revs.Revisions[0].Revision != 2 || revs.Revisions[0].Resources != 1 || revs.Next != 2 {
		t.Fatalf("revisions of b: %+v, %v", revs, err)
	}
	if revs, err = s.PageRevisions(ctx, "b", revs.Next, 1); err != nil || len(revs.Revisions) != 1 || revs.Revisions[0].Revision != 1 {
		t.Fatalf("revisions of b before 2: %+v, %v", revs, err)
	}
	rev, err := s.GetRevision(ctx, "b", 1)
	if err != nil || len(rev.Resources) != 1 || rev.Resources[0].Content != "1\n" || rev.Digest == "" {
		t.Fatalf("b r1: %+v, %v", rev, err)
	}
	if _, err := s.GetRevision(ctx, "b", 3); !isNotFound(err) {
		t.Fatalf("b r3: %v", err)
	}
}

func TestReportOutcomes(t *testing.T) {
	s, _ := setupWith(t, Options{})
	mustModule(t, s, "app", hq.Resource{Name: "a", Kind: hq.KindFile, Path: "/etc/a", Content: "1\n"},
		hq.Resource{Name: "b", Kind: hq.KindFile, Path: "/etc/b", Content: "1\n"})
	mustNode(t, s, "web-1")
	mustAssign(t, s, "web-1", "app")
	d := mustCompose(t, s, "web-1", "test")
	ingest(t, s, "web-1", d, append(applied("app", "a"), failing("app", "b"))...)
	ingest(t, s, "web-1", d, append(applied("app", "a"), failing("app", "b"))...)
	ingest(t, s, "web-1", d, applied("app", "a", "b")...)
	out, err := s.ReportOutcomes(context.Background(), "web-1", 10)
	if err != nil || len(out) != 2 {
		t.Fatalf("outcomes %+v, %v", out, err)
	}
	if out[0].Applied != 2 || out[0].Failed != 0 || out[1].Applied != 1 || out[1].Failed != 1 || out[1].Repeats != 1 {
		t.Fatalf("outcomes newest first %+v", out)
	}
	if _, err := s.ReportOutcomes(context.Background(), "ghost", 10); !isNotFound(err) {
		t.Fatalf("outcomes of no node: %v", err)
	}
}

func isNotFound(err error) bool { return hq.ErrorCode(err) == hq.CodeNotFound }
