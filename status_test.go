package hq

import (
	"slices"
	"testing"
	"time"
)

func TestComputeStatusOrderAndLines(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 12, 0, 0, time.UTC)
	recent := now.Add(-time.Minute)
	old := now.Add(-time.Hour)
	stuck := StuckView{Module: "app", Resource: "migrate", Attempts: 7, Since: old, NeverApplied: true, Blocks: 5}
	stuckLine := "stuck: app/migrate (never applied, 7 attempts since 2026-11-30T02:12:00Z), blocks 5 resource(s)"
	cases := []struct {
		name  string
		f     NodeFacts
		want  Status
		lines []string // every line, in order
	}{
		{"new", NodeFacts{}, StatusNew, []string{"new: never reported"}},
		{"converged", NodeFacts{LastReportAt: &recent, Generation: 3, AppliedGeneration: 3}, StatusConverged, []string{}},
		{"silent beats stuck", NodeFacts{LastReportAt: &old, Stuck: []StuckView{stuck}}, StatusSilent,
			[]string{"silent: no report since 2026-11-30T02:12:00Z (1h0m0s ago)", stuckLine}},
		{"stuck beats held", NodeFacts{LastReportAt: &recent, Stuck: []StuckView{stuck}, Held: map[string]int{"route-proxy": 13}}, StatusStuck,
			[]string{stuckLine, "waiting on take: route-proxy (13 held)"}},
		{"waiting on take", NodeFacts{LastReportAt: &recent, Held: map[string]int{"route-proxy": 13, "mailu": 3}}, StatusWaitingOnTake,
			[]string{"waiting on take: route-proxy (13 held)", "waiting on take: mailu (3 held)"}},
		{"behind is mid-change", NodeFacts{LastReportAt: &recent, Generation: 42, AppliedGeneration: 41, Failed: []string{"a/b"}}, StatusMidChange,
			[]string{"mid-change: generation 42 declared, 41 applied", "degraded: 1 failed: a/b"}},
		{"grouped-pending is mid-change", NodeFacts{LastReportAt: &recent, Counts: map[State]int{StateGroupedPending: 2}, WaitingGroups: []string{"app/pair"}}, StatusMidChange,
			[]string{"mid-change: 2 grouped-pending, waiting group(s): app/pair"}},
		{"degraded", NodeFacts{LastReportAt: &recent, Failed: []string{"a/b"}}, StatusDegraded, []string{"degraded: 1 failed: a/b"}},
		{"a refusal is a line, not a status", NodeFacts{LastReportAt: &recent, Generation: 42, AppliedGeneration: 42,
			Refused: []RefusedSend{{Generation: 41, AppliedGeneration: 42, ComposedBy: "hq-a", At: old}}}, StatusConverged,
			[]string{"refused declaration generation 41 (applied 42) composed by hq-a at 2026-11-30T02:12:00Z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, lines := ComputeStatus(c.f, now, 3*time.Minute)
			if got != c.want {
				t.Fatalf("status %s, want %s (lines %q)", got, c.want, lines)
			}
			if !slices.Equal(lines, c.lines) {
				t.Fatalf("lines\n got %q\nwant %q", lines, c.lines)
			}
		})
	}
}

func TestStuckScope(t *testing.T) {
	for _, c := range []struct {
		stuck, assigned int
		want            string
	}{{1, 1, ScopeNodeLocal}, {1, 3, ScopeNodeLocal}, {2, 3, ScopeMeshWide}, {2, 4, ScopeMeshWide}, {2, 5, ScopeNodeLocal}, {20, 20, ScopeMeshWide}} {
		if got := StuckScope(c.stuck, c.assigned); got != c.want {
			t.Errorf("stuck on %d of %d: %s, want %s", c.stuck, c.assigned, got, c.want)
		}
	}
}
