package db

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
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
	t0 := c.Now()
	report(t, s, "ok", true)
	report(t, s, "late", false)
	report(t, s, "gone", true)
	report(t, s, "quiet", true)
	c.Advance(time.Hour)
	report(t, s, "ok", true) // a repeat: the row of t0 stands on, to now
	report(t, s, "late", true)
	report(t, s, "gone", true)
	c.Advance(time.Hour)
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

// The history's counts are those of its definition worked out node by node, over fleets of
// rows written in SQL at random: nodes whose newest row was current before the first moment and
// nodes whose outcome changed among the moments, rows that went silent, nodes deleted before,
// among or after the moments, and nodes that never reported.
func TestConvergedHistoryByDefinition(t *testing.T) {
	s, c := setupWith(t, Options{})
	ctx := context.Background()
	silent := s.opt.SilentAfter
	base := c.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	type row struct {
		id       int64
		at, last time.Time
		fine     bool
	}
	type node struct {
		name string
		rows []row
		gone *time.Time
	}
	// Earlier trials' nodes stay, and count in the later trials too.
	var all []node
	for trial := range 25 {
		for i := range 40 {
			n := node{name: fmt.Sprintf("t%d-n%d", trial, i)}
			at := base.Add(-time.Duration(rng.IntN(6*60)) * time.Minute).Add(time.Duration(rng.IntN(60000)) * time.Millisecond)
			for range rng.IntN(6) {
				last := at.Add(time.Duration(rng.IntN(3*3600)) * time.Second)
				n.rows = append(n.rows, row{at: at, last: last, fine: rng.IntN(3) > 0})
				at = at.Add(time.Duration(rng.IntN(4*3600000)) * time.Millisecond)
			}
			if rng.IntN(5) == 0 {
				g := base.Add(time.Duration(rng.IntN(8*60)-4*60) * time.Minute)
				n.gone = &g
			}
			var gone any
			if n.gone != nil {
				gone = hq.FormatTime(*n.gone)
			}
			if _, err := s.write.Exec(testdb.Rebind(`INSERT INTO nodes (name, token_hash, created_at, deleted_at) VALUES (?, ?, ?, ?)`),
				n.name, n.name, hq.FormatTime(base.Add(-24*time.Hour)), gone); err != nil {
				t.Fatal(err)
			}
			for k, r := range n.rows {
				failed := 0
				if !r.fine {
					failed = 1
				}
				if err := s.write.QueryRow(testdb.Rebind(`INSERT INTO reports (node, generation, digest, summary, outcome_digest, applied, failed, at, last_at)
					VALUES (?, 1, 'sha256:x', '', '', 1, ?, ?, ?) RETURNING id`),
					n.name, failed, hq.FormatTime(r.at), hq.FormatTime(r.last)).Scan(&n.rows[k].id); err != nil {
					t.Fatal(err)
				}
			}
			all = append(all, n)
		}
		first := base.Add(time.Duration(rng.IntN(4*60)-3*60) * time.Minute).Truncate(time.Millisecond)
		step := time.Duration(7+rng.IntN(90)) * time.Minute
		moments := 1 + rng.IntN(12)
		got, err := s.ConvergedHistory(ctx, first, step, moments)
		if err != nil {
			t.Fatal(err)
		}
		for i := range moments {
			m := first.Add(time.Duration(i) * step)
			var conv, not int
			for _, n := range all {
				if n.gone != nil && !m.Before(*n.gone) {
					continue
				}
				var stand *row
				for k := range n.rows {
					if !n.rows[k].at.After(m) {
						stand = &n.rows[k]
					}
				}
				switch {
				case stand == nil:
				case stand.fine && !m.After(stand.last.Add(silent)):
					conv++
				default:
					not++
				}
			}
			if g := got[i]; g.Converged != conv || g.NotConverged != not || !g.At.Equal(m) {
				t.Fatalf("trial %d, moment %d (%s, step %s): %d converged, %d not at %s; want %d, %d",
					trial, i, m.Format(time.RFC3339Nano), step, g.Converged, g.NotConverged, g.At, conv, not)
			}
		}
	}
}

// millis reads a stored time as time.Parse does, and anything else through it.
func TestMillis(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		at := time.UnixMilli(rng.Int64N(4102444800000)).UTC()
		if s := hq.FormatTime(at); millis(s) != at.UnixMilli() {
			t.Fatalf("millis(%s) = %d, want %d", s, millis(s), at.UnixMilli())
		}
	}
	for _, s := range []string{"", "2026-11-30T03:00:00Z", "2026-11-30 03:00:00.000Z", "2026-1x-30T03:00:00.000Z", "2026-13-30T03:00:00.000Z"} {
		if got, want := millis(s), hq.ParseTime(s).UnixMilli(); got != want {
			t.Errorf("millis(%q) = %d, want %d", s, got, want)
		}
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

	// Rollout 3 as a page reads it: the rollout, its nodes counted by wave, a page of them.
	if _, err := s.stepRollouts(ctx); err != nil {
		t.Fatal(err)
	}
	full, err := s.GetRollout(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.RolloutSummary(ctx, 3)
	if err != nil || sum.Line != full.Line || sum.Progress != nil {
		t.Fatalf("summary of rollout 3: %+v, %v", sum, err)
	}
	if _, err := s.RolloutSummary(ctx, 9); !isNotFound(err) {
		t.Fatalf("summary of rollout 9: %v", err)
	}
	waves, err := s.RolloutWaves(ctx, 3)
	if err != nil || len(waves) != 2 {
		t.Fatalf("waves of rollout 3: %+v, %v", waves, err)
	}
	if w := waves[0]; w.Wave != 0 || w.State != hq.RolloutNodePending || w.Nodes != 1 || w.FirstStarted != nil || w.LastEnded != nil {
		t.Errorf("the node waiting: %+v", w)
	}
	if w := waves[1]; w.Wave != 1 || w.State != hq.RolloutNodeInFlight || w.Nodes != 1 || w.FirstStarted == nil || w.LastEnded != nil {
		t.Errorf("the canary: %+v", w)
	}
	nodes, err := s.PageRolloutNodes(ctx, 3, "", 1)
	if err != nil || len(nodes.Nodes) != 1 || nodes.Nodes[0].Node != "web-1" || nodes.Next != "web-1" ||
		!reflect.DeepEqual(nodes.Nodes[0], full.Progress[0]) {
		t.Fatalf("first page of rollout 3's nodes: %+v, %v; whole: %+v", nodes, err, full.Progress)
	}
	nodes, err = s.PageRolloutNodes(ctx, 3, nodes.Next, 1)
	if err != nil || len(nodes.Nodes) != 1 || nodes.Nodes[0].Node != "web-2" || nodes.Next != "" {
		t.Fatalf("second page of rollout 3's nodes: %+v, %v", nodes, err)
	}
	views, err := s.NodesNamed(ctx, []string{"web-2", "nobody", "web-1"})
	if err != nil || len(views) != 2 || views[0].Name != "web-1" || views[1].Name != "web-2" || len(views[0].Assignments) != 1 {
		t.Fatalf("nodes named: %+v, %v", views, err)
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
	// A page's counts are the API's.
	for _, p := range []string{"p1", "p2"} {
		want, err := s.GetPlacement(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.PlacementSummary(ctx, p); err != nil || got.Matched != want.Matched || got.Assigned != want.Assigned ||
			got.Matched != 1 || got.Assigned != 1 || got.Selector != want.Selector {
			t.Fatalf("summary of %s: %+v, %v; GetPlacement: %+v", p, got, err, want)
		}
		if sel, err := s.PlacementSelector(ctx, p); err != nil || sel != "role=web" {
			t.Fatalf("selector of %s: %q, %v", p, sel, err)
		}
	}
	if _, err := s.PlacementSummary(ctx, "p3"); !isNotFound(err) {
		t.Fatalf("summary of p3: %v", err)
	}
	if _, err := s.PlacementSelector(ctx, "p3"); !isNotFound(err) {
		t.Fatalf("selector of p3: %v", err)
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
