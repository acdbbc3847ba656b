package hostd

import (
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

func TestActionRunsOncePerDigestAcrossRestarts(t *testing.T) {
	b := setup(t)
	action := func(cmd string) *hq.Declaration {
		return b.decl(mod("app", false, hq.Resource{Name: "migrate", Kind: hq.KindAction, Command: []string{"/bin/sh", "-c", cmd}}))
	}
	runs := func() int { return strings.Count(b.read("/runs"), "\n") }
	d := action("echo run >> {root}/runs")
	b.reconcile(d).want(t, "app/migrate", hq.StateApplied, true, true)
	b.reconcile(d).want(t, "app/migrate", hq.StateApplied, true, false)
	b.restart()
	b.reconcile(d).want(t, "app/migrate", hq.StateApplied, true, false)
	if runs() != 1 {
		t.Fatalf("ran %d times", runs())
	}
	// A new spec runs again.
	b.reconcile(action("echo run2 >> {root}/runs")).want(t, "app/migrate", hq.StateApplied, true, true)
	if runs() != 2 {
		t.Fatalf("ran %d times after a new spec", runs())
	}
}

func TestFailedActionIsNotRemembered(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, hq.Resource{Name: "once", Kind: hq.KindAction,
		Command: []string{"/bin/sh", "-c", "echo try >> {root}/tries; test -f {root}/ready"}}))
	b.reconcile(d).want(t, "app/once", hq.StateFailed, true, false)
	b.write("/ready", "", 0o644)
	b.restart()
	b.reconcile(d).want(t, "app/once", hq.StateApplied, true, true)
	b.reconcile(d).want(t, "app/once", hq.StateApplied, true, false)
	if n := strings.Count(b.read("/tries"), "\n"); n != 2 {
		t.Fatalf("tried %d times, want 2", n)
	}
}
