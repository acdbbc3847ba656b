package hostd

import (
	"testing"
	"time"

	"github.com/meshhq/hq"
)

func TestFailingGateBlocksTheRestOfItsModule(t *testing.T) {
	b := setup(t)
	d := b.decl(
		mod("app", false,
			file("before", "/etc/before.conf", "b"),
			hq.Resource{Name: "migrate", Kind: hq.KindAction, Command: []string{"/bin/sh", "-c", "echo 'no database' >&2; exit 3"}},
			file("after", "/etc/after.conf", "a"),
			hq.Resource{Name: "gate2", Kind: hq.KindFile, Path: "/etc/gate2", Content: "g", Gate: ptr(true)},
		),
		mod("other", false, file("conf", "/etc/other.conf", "o")),
	)
	rs := b.reconcile(d)
	rs.want(t, "app/before", hq.StateApplied, true, true)
	if r := rs.want(t, "app/migrate", hq.StateFailed, true, false); r.Error != "exit status 3: no database" {
		t.Fatalf("error %q", r.Error)
	}
	for _, ref := range []string{"app/after", "app/gate2"} {
		if r := rs.want(t, ref, hq.StatePending, false, false); r.BlockedBy != "app/migrate" {
			t.Fatalf("%s blocked by %q", ref, r.BlockedBy)
		}
	}
	rs.want(t, "other/conf", hq.StateApplied, true, true)
	if b.exists("/etc/after.conf") {
		t.Fatal("a resource behind a failed gate was applied")
	}
	if line := hq.TallyResults(b.eng.Reconcile(t.Context(), d), d.ResourceCount(), func(ref string) bool { return ref == "app/migrate" }).Line(); line != "applied 2 resource(s), 1 stuck, 2 pending" {
		t.Fatalf("line %q", line)
	}
}

func TestGateFalseOnActionDoesNotBlock(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false,
		hq.Resource{Name: "warm", Kind: hq.KindAction, Command: []string{"false"}, Gate: ptr(false)},
		file("after", "/etc/after.conf", "a"),
	))
	rs := b.reconcile(d)
	rs.want(t, "app/warm", hq.StateFailed, true, false)
	rs.want(t, "app/after", hq.StateApplied, true, true)
}

func TestBackoff(t *testing.T) {
	b := setup(t)
	b.manual = true
	bad := hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x", Validate: []string{"/bin/sh", "-c", "echo nope; exit 1"}}
	d := b.decl(mod("app", false, bad, file("ok", "/etc/ok.conf", "ok")))
	t0 := b.now
	at := func(after time.Duration) results {
		b.now = t0.Add(after)
		return b.reconcile(d)
	}
	attempted := func(rs results) {
		t.Helper()
		rs.want(t, "app/conf", hq.StateFailed, true, false)
	}
	skipped := func(rs results) {
		t.Helper()
		if r := rs.want(t, "app/conf", hq.StateFailed, false, false); r.Error != "validate: exit status 1: nope" {
			t.Fatalf("a skipped resource reports %q, not its last error", r.Error)
		}
	}
	attempted(at(0)) // 1 failure: next after 1 interval
	rs := at(30 * time.Second)
	skipped(rs)
	rs.want(t, "app/ok", hq.StateApplied, true, false)
	attempted(at(time.Minute))     // 2 failures: next after 2 intervals
	skipped(at(2 * time.Minute))   //
	attempted(at(3 * time.Minute)) // 3 failures: next after 4 intervals
	skipped(at(6 * time.Minute))
	attempted(at(7 * time.Minute))

	// The controller's retry drops the back-off for the resource it names.
	b.eng.DropBackoff("app/conf")
	attempted(at(7*time.Minute + time.Second))
	skipped(at(7*time.Minute + 2*time.Second))

	// Back-off is kept across a restart.
	b.restart()
	skipped(at(7*time.Minute + 3*time.Second))

	// A new declaration that does not change conf keeps its back-off, also across a restart...
	d = b.decl(mod("app", false, bad, file("ok", "/etc/ok.conf", "ok2")))
	skipped(at(7*time.Minute + 4*time.Second))
	b.restart()
	skipped(at(7*time.Minute + 5*time.Second))

	// ...one that changes it resets it.
	bad.Validate = append(bad.Validate, "again")
	d = b.decl(mod("app", false, bad, file("ok", "/etc/ok.conf", "ok2")))
	attempted(at(7*time.Minute + 6*time.Second))
}

func TestBackoffIsCapped(t *testing.T) {
	bo := newBackoff(time.Minute)
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{1, time.Minute}, {2, 2 * time.Minute}, {6, 32 * time.Minute}, {7, time.Hour}, {100, time.Hour}} {
		if got := bo.wait(c.n); got != c.want {
			t.Errorf("wait(%d) = %s, want %s", c.n, got, c.want)
		}
	}
}

func TestControllerRetryDropsBackoff(t *testing.T) {
	b := setup(t)
	b.manual = true
	d := b.decl(mod("app", false, hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/a", Content: "x", Validate: []string{"false"}}))
	b.reconcile(d).want(t, "app/conf", hq.StateFailed, true, false)
	b.reconcile(d).want(t, "app/conf", hq.StateFailed, false, false)
	a := &daemon{eng: b.eng, log: b.eng.log, stuck: map[string]bool{}}
	a.delivered(delivered{report: &hq.Report{}, resp: &hq.ReportResponse{Retry: []string{"app/conf"}}})
	b.reconcile(d).want(t, "app/conf", hq.StateFailed, true, false)
}
