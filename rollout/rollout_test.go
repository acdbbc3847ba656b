package rollout

import (
	"testing"

	"github.com/meshhq/hq"
)

func TestNext(t *testing.T) {
	canary := hq.RolloutPolicy{Canary: 1, MaxUnavailable: hq.Amount{N: 2}, FailureBudget: 1}
	plain := hq.RolloutPolicy{MaxUnavailable: hq.Amount{N: 3}}
	for _, c := range []struct {
		name string
		p    hq.RolloutPolicy
		c    Counts
		want Step
	}{
		{"the canary starts alone", canary, Counts{Nodes: 10, Pending: 10}, Step{Action: Advance, Start: 1, Wave: 1}},
		{"nothing more while the canary is in flight", canary, Counts{Nodes: 10, Pending: 9, InFlight: 1, FirstWaveInFlight: 1, LastWave: 1}, Step{Action: Wait}},
		{"after the canary, waves as wide as max_unavailable", canary, Counts{Nodes: 10, Pending: 9, Done: 1, LastWave: 1}, Step{Action: Advance, Start: 2, Wave: 2}},
		{"a wave fills what in-flight nodes leave", plain, Counts{Nodes: 10, Pending: 5, InFlight: 2, Done: 3, LastWave: 2}, Step{Action: Advance, Start: 1, Wave: 3}},
		{"no room while max_unavailable are in flight", plain, Counts{Nodes: 10, Pending: 4, InFlight: 3, Done: 3, LastWave: 2}, Step{Action: Wait}},
		{"failures within the budget go on", canary, Counts{Nodes: 10, Pending: 8, Failed: 1, Done: 1, LastWave: 1}, Step{Action: Advance, Start: 2, Wave: 2}},
		{"failures beyond the budget pause", canary, Counts{Nodes: 10, Pending: 7, Failed: 2, Done: 1, LastWave: 2}, Step{Action: Pause}},
		{"forgiven failures do not count", canary, Counts{Nodes: 10, Pending: 7, Failed: 2, Forgiven: 1, Done: 1, LastWave: 2}, Step{Action: Advance, Start: 2, Wave: 3}},
		{"every node done completes", plain, Counts{Nodes: 4, Done: 4, LastWave: 2}, Step{Action: Complete, Reason: "every node done"}},
		{"done with failures in the budget completes and says so", canary, Counts{Nodes: 4, Done: 3, Failed: 1, LastWave: 3},
			Step{Action: Complete, Reason: "every node done but 1 failed within the budget"}},
		{"a promoted rollout does not wait for its canary", hq.RolloutPolicy{Canary: 1, MaxUnavailable: hq.Amount{N: 3}},
			Counts{Nodes: 10, Pending: 9, InFlight: 1, FirstWaveInFlight: 1, LastWave: 1, Promoted: true}, Step{Action: Advance, Start: 2, Wave: 2}},
		{"promoted, max_unavailable still counts the canaries in flight", canary,
			Counts{Nodes: 10, Pending: 8, InFlight: 2, FirstWaveInFlight: 1, LastWave: 2, Promoted: true}, Step{Action: Wait}},
		{"the last nodes in flight are waited for", plain, Counts{Nodes: 4, Done: 3, InFlight: 1, LastWave: 2}, Step{Action: Wait}},
	} {
		if got := Next(c.p, c.c); got != c.want {
			t.Errorf("%s: Next = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestFailuresAreGroupedByWhatFailed(t *testing.T) {
	got := Failures([]Failed{
		{"web-7", "app/conf stuck; 3 attempts"},
		{"web-9", "app/conf stuck"},
		{"web-2", "not converged within 10m0s"},
	})
	if want := "app/conf stuck on web-7, web-9; not converged within 10m0s on web-2"; got != want {
		t.Fatalf("Failures = %q, want %q", got, want)
	}
	if got := Failures(nil); got != "" {
		t.Fatalf("Failures(nil) = %q", got)
	}
}

// A pause names every failed node whatever order the store reads them in, and past a few in a
// group, counts the rest.
func TestFailuresNameEveryNode(t *testing.T) {
	got := Failures([]Failed{
		{"w1", "app/conf failed"},
		{"w3", "app/conf stuck"},
		{"w2", "app/conf failed; pinned back to its revision: auto_revert"},
	})
	if want := "app/conf failed on w1, w2; app/conf stuck on w3"; got != want {
		t.Fatalf("Failures = %q, want %q", got, want)
	}
	var many []Failed
	for _, n := range []string{"w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11", "w12"} {
		many = append(many, Failed{n, "app/conf failed"})
	}
	if got, want := Failures(many), "app/conf failed on 12 nodes: w1, w2, w3, w4, w5 and 7 more"; got != want {
		t.Fatalf("Failures of 12 = %q, want %q", got, want)
	}
}
