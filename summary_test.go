package hq

import (
	"testing"
	"time"
)

func results(spec ...any) []Result {
	var out []Result
	for i := 0; i+3 <= len(spec); i += 3 {
		out = append(out, Result{Module: spec[i].(string), Resource: spec[i+1].(string), Outcome: spec[i+2].(State)})
	}
	return out
}

func TestReportLine(t *testing.T) {
	cases := []struct {
		name  string
		rs    []Result
		sent  int
		stuck map[string]bool
		want  string
	}{
		{"nothing", nil, 0, nil, "applied 0 resource(s)"},
		{"all applied", results("a", "x", StateApplied, "a", "y", StateApplied), 2, nil, "applied 2 resource(s)"},
		{"every part in order",
			results("app", "a", StatePending, "app", "b", StateGroupedPending, "app", "c", StateFailed, "app", "d", StateFailed,
				"mailu", "m1", StateHeld, "route-proxy", "r1", StateHeld, "route-proxy", "r2", StateHeld, "app", "e", StateApplied),
			8, map[string]bool{"app/d": true},
			"applied 1 resource(s), 3 held for untaken modules (route-proxy: 2, mailu: 1), 1 failed, 1 stuck, 1 grouped-pending, 1 pending"},
		{"held ties by name", results("b", "1", StateHeld, "a", "1", StateHeld), 2, nil,
			"applied 0 resource(s), 2 held for untaken modules (a: 1, b: 1)"},
		{"unaccounted", results("a", "x", StateApplied), 3, nil, "applied 1 resource(s); 2 of 3 sent resource(s) unaccounted for"},
		{"a duplicate result counts once", results("a", "x", StateApplied, "a", "x", StateApplied), 2, nil,
			"applied 1 resource(s); 1 of 2 sent resource(s) unaccounted for"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := TallyResults(c.rs, c.sent, func(ref string) bool { return c.stuck[ref] }).Line()
			if got != c.want {
				t.Fatalf("\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// Drift put back is named right after the applied count: up to three refs, then "…".
func TestReportLineDrift(t *testing.T) {
	rs := results("app", "conf", StateApplied, "app", "unit", StateApplied, "app", "x", StateApplied,
		"web", "a", StateApplied, "mailu", "m", StateHeld)
	for i := range rs[:2] {
		rs[i].Drift = true
	}
	want := "applied 4 resource(s) (2 drift put back: app/conf, app/unit), 1 held for untaken modules (mailu: 1)"
	if got := TallyResults(rs, 5, nil).Line(); got != want {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
	for i := range rs[:4] {
		rs[i].Drift = true
	}
	want = "applied 4 resource(s) (4 drift put back: app/conf, app/unit, app/x, …), 1 held for untaken modules (mailu: 1)"
	if got := TallyResults(rs, 5, nil).Line(); got != want {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
}

// A refusal of TLS a report carries comes last, after what is unaccounted for.
func TestReportLineEndsWithATransportRefusal(t *testing.T) {
	from := time.Date(2026, 11, 30, 3, 12, 0, 0, time.UTC)
	rep := &Report{Results: results("a", "x", StateApplied),
		Transport: &TransportRefusal{From: from, To: from.Add(time.Minute), Reason: "the controller refused the TLS handshake: remote error: tls: expired certificate"}}
	want := "applied 1 resource(s); 1 of 2 sent resource(s) unaccounted for; transport refused from 2026-11-30T03:12:00.000Z to 2026-11-30T03:13:00.000Z: " +
		"the controller refused the TLS handshake: remote error: tls: expired certificate"
	if got := TallyReport(rep, 2, nil).Line(); got != want {
		t.Fatalf("\n got %q\nwant %q", got, want)
	}
	rep.Transport = nil
	if got := TallyReport(rep, 1, nil).Line(); got != "applied 1 resource(s)" {
		t.Fatalf("without one: %q", got)
	}
}
