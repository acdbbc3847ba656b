package hostd

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

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

// TestCommandsDoNotSeeControllerVariables: the demo runs hosts inside the controller's process,
// so its HQ_* variables (the admin token) must not reach what hostd runs, nor HOSTD_* ones.
func TestCommandsDoNotSeeControllerVariables(t *testing.T) {
	t.Setenv("HQ_ADMIN_TOKEN", "admin-secret")
	t.Setenv("HOSTD_TOKEN", "node-secret")
	b := setup(t)
	d := b.decl(mod("app", false,
		hq.Resource{Name: "env", Kind: hq.KindAction, Command: []string{"/bin/sh", "-c", "env > {root}/action-env.txt"}},
		hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x",
			Validate: []string{"/bin/sh", "-c", "env > {root}/validate-env.txt"}},
		hq.Resource{Name: "svc", Kind: hq.KindService, Env: map[string]string{"HQ_OWN": "declared"},
			Command: []string{"/bin/sh", "-c", "env > {root}/svc-env.tmp; mv {root}/svc-env.tmp {root}/svc-env.txt; exec sleep 60"}},
	))
	rs := b.reconcile(d)
	for _, ref := range []string{"app/env", "app/conf", "app/svc"} {
		rs.want(t, ref, hq.StateApplied, true, true)
	}
	waitFor(t, 5*time.Second, "svc-env.txt", func() bool { return b.exists("/svc-env.txt") })
	for _, f := range []string{"/action-env.txt", "/validate-env.txt", "/svc-env.txt"} {
		env := b.read(f)
		if strings.Contains(env, "admin-secret") || strings.Contains(env, "node-secret") {
			t.Fatalf("%s sees hostd's or the controller's secrets:\n%s", f, env)
		}
	}
	if !strings.Contains(b.read("/svc-env.txt"), "HQ_OWN=declared") {
		t.Fatal("a variable the service declares was dropped")
	}
}

func TestActionWhoseRunCannotBeSavedFails(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, hq.Resource{Name: "once", Kind: hq.KindAction,
		Command: []string{"/bin/sh", "-c", "test -f {root}/ready && echo run >> {root}/runs"}}))
	b.reconcile(d).want(t, "app/once", hq.StateFailed, true, false)

	// The ledger cannot be written: the action runs, and its result says it was not recorded.
	ledger := filepath.Join(b.state, ledgerFile)
	if err := os.Remove(ledger); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ledger, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	b.write("/ready", "", 0o644)
	if r := b.reconcile(d).want(t, "app/once", hq.StateFailed, true, false); !strings.Contains(r.Error, "ledger") {
		t.Fatalf("error %q does not name the ledger", r.Error)
	}

	// Once it can, it is saved, and the action does not run again.
	if err := os.RemoveAll(ledger); err != nil {
		t.Fatal(err)
	}
	b.reconcile(d).want(t, "app/once", hq.StateApplied, true, false)
	b.restart()
	b.reconcile(d).want(t, "app/once", hq.StateApplied, true, false)
	if n := strings.Count(b.read("/runs"), "\n"); n != 1 {
		t.Fatalf("ran %d times", n)
	}
}

func TestCommandOutputIsCapped(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := runCommand(t.Context(), 10*time.Second, t.TempDir(),
		[]string{"/bin/sh", "-c", "head -c 33554432 /dev/zero | tr '\\0' x; echo; echo the reason; exit 3"})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.HasSuffix(err.Error(), "the reason") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("error %.200q", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("32 MiB of output allocated %d MiB", grew>>20)
	}
}
