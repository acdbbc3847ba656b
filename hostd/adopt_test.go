package hostd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// adopted checks that ref runs as pid under the engine, re-adopted rather than started by it.
func (b *bed) adopted(ref string, pid int) {
	b.t.Helper()
	p := b.eng.sup.get(ref)
	if p == nil || p.pid != pid || p.child || !b.eng.sup.running(p) {
		b.t.Fatalf("%s is %+v, want pid %d re-adopted and running", ref, p, pid)
	}
}

func TestServicesAreReadoptedAcrossRestarts(t *testing.T) {
	b := setup(t)
	web, health := b.hungWeb()
	d := b.decl(mod("app", false, sleeper("svc", nil), web))
	rs := b.reconcile(d)
	rs.want(t, "app/svc", hq.StateApplied, true, true)
	rs.want(t, "app/web", hq.StateApplied, true, true)
	svc, wpid := b.pidOf("svc"), b.pidOf("web")
	// Its own session: a signal to hostd's process group or session does not reach it.
	if f, err := procStatFields(svc); err != nil || f[3] != strconv.Itoa(svc) || f[2] != strconv.Itoa(svc) {
		t.Fatalf("service pid %d has process group and session %v", svc, f[2:4])
	}

	for range 3 {
		b.restart()
		if !alive(svc) || !alive(wpid) {
			t.Fatal("a restart of hostd stopped a service")
		}
		rs := b.reconcile(d)
		for _, ref := range []string{"app/svc", "app/web"} {
			if r := rs.want(t, ref, hq.StateApplied, true, false); r.Drift {
				t.Fatalf("%s re-adopted is drift", ref)
			}
		}
		b.adopted("app/svc", svc)
		b.adopted("app/web", wpid)
	}

	// The health check of an adopted service still runs: hung, it is restarted once.
	health.pid.Store(int64(wpid))
	os.Remove(b.path("/web.pid"))
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, true)
	b.waitDead(wpid)
	wpid = b.pidOf("web")

	// An adopted service that dies is seen dead, restarted, and that is drift.
	os.Remove(b.path("/svc.pid"))
	syscall.Kill(svc, syscall.SIGKILL)
	waitFor(t, 5*time.Second, "the watch to see an adopted service die", func() bool {
		select {
		case <-b.eng.sup.get("app/svc").done:
			return true
		default:
			return false
		}
	})
	if r := b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true); !r.Drift {
		t.Fatal("an adopted service that died and was started again is not drift")
	}
	svc = b.pidOf("svc")

	// Unassigned after a restart: stopped, adopted or not.
	b.restart()
	b.reconcile(b.decl(mod("other", false, file("x", "/etc/x", "x"))))
	b.waitDead(svc)
	b.waitDead(wpid)
	if len(b.eng.sup.refs()) != 0 {
		t.Fatalf("still supervised: %v", b.eng.sup.refs())
	}
}

func TestServiceWhoseSpecChangedIsRestartedAfterARestart(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(mod("app", false, sleeper("svc", map[string]string{"GREETING": "v1"}))))
	pid := b.pidOf("svc")
	b.restart()
	os.Remove(b.path("/svc.pid"))
	r := b.reconcile(b.decl(mod("app", false, sleeper("svc", map[string]string{"GREETING": "v2"})))).
		want(t, "app/svc", hq.StateApplied, true, true)
	if r.Drift {
		t.Fatal("a new spec is drift")
	}
	b.waitDead(pid)
	if b.pidOf("svc") == pid {
		t.Fatal("not restarted")
	}
}

func TestServiceThatDiedWhileHostdWasDownIsStarted(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, sleeper("svc", nil)))
	b.reconcile(d)
	pid := b.pidOf("svc")
	b.eng.Close()
	syscall.Kill(pid, syscall.SIGKILL)
	b.waitDead(pid)
	os.Remove(b.path("/svc.pid"))
	b.open()
	if r := b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true); !r.Drift {
		t.Fatal("a service that died while hostd was down is not drift")
	}
	if b.pidOf("svc") == pid {
		t.Fatal("not started")
	}
}

func TestServicesStoppedOnExitStartAgainWithoutDrift(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, sleeper("svc", nil)))
	b.reconcile(d)
	pid := b.pidOf("svc")
	b.eng.cfg.StopServicesOnExit = true
	b.eng.Close()
	if alive(pid) {
		t.Fatal("not stopped on exit")
	}
	b.open()
	if r := b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true); r.Drift {
		t.Fatal("a service hostd stopped itself is drift when started again")
	}
}

// TestReusedPidIsNotAdopted writes a record whose pid now belongs to another process, with
// another start time or from another boot: hostd neither adopts nor signals that process.
func TestReusedPidIsNotAdopted(t *testing.T) {
	for name, c := range map[string]struct {
		spoil func(*serviceRecord)
		// drift: a service found dead in this boot died behind hostd's back; after a reboot
		// nothing did.
		drift bool
	}{
		"start time": {func(r *serviceRecord) { r.Start++ }, true},
		"boot":       {func(r *serviceRecord) { r.Boot = "another-boot" }, false},
	} {
		t.Run(name, func(t *testing.T) {
			b := setup(t)
			svc := sleeper("svc", nil)
			d := b.decl(mod("app", false, svc))
			b.reconcile(d)
			mine := b.pidOf("svc")
			b.eng.cfg.StopServicesOnExit = true
			b.eng.Close()

			other := exec.Command("/bin/sh", "-c", "exec sleep 60")
			other.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := other.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { other.Process.Kill(); other.Wait() })
			start, err := procStart(other.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			r := serviceRecord{Pid: other.Process.Pid, Start: start, Boot: bootID(), Spec: svc.Digest(), Resource: &svc, Healthy: true}
			c.spoil(&r)
			if err := writeJSONAtomic(filepath.Join(b.state, servicesFile), map[string]serviceRecord{"app/svc": r}); err != nil {
				t.Fatal(err)
			}

			os.Remove(b.path("/svc.pid"))
			b.open()
			if r := b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true); r.Drift != c.drift {
				t.Fatalf("drift %v, want %v", r.Drift, c.drift)
			}
			if pid := b.pidOf("svc"); pid == other.Process.Pid || pid == mine {
				t.Fatalf("service runs as pid %d", pid)
			}
			if !alive(other.Process.Pid) {
				t.Fatal("the process that reuses the pid was signalled")
			}
		})
	}
}

// TestServiceOfAFailingGroupRunsOnAfterARestart: a group that does not apply after hostd
// restarts leaves its running service as it was, not stopped.
func TestServiceOfAFailingGroupRunsOnAfterARestart(t *testing.T) {
	b := setup(t)
	server := sleeper("server", nil, "a", "b")
	server.Group = "pair"
	b.reconcile(b.decl(pair("A1\n", "B1\n", server))).want(t, "app/server", hq.StateApplied, true, true)
	pid := b.pidOf("server")
	b.restart()
	rs := b.reconcile(b.decl(pair("A2\n", "bad\n", server)))
	rs.want(t, "app/b", hq.StateFailed, true, false)
	rs.want(t, "app/server", hq.StateGroupedPending, true, false)
	b.adopted("app/server", pid)
	if b.read("/etc/pair/a.conf") != "A1\n" {
		t.Fatal("a group that failed applied")
	}
}

// TestServiceRecordedWithoutItsSpecIsRestarted: services.json as hostd wrote it before it
// re-adopted services holds only pid and start; such a service runs an unknown spec, so it is
// stopped and started with the declared one.
func TestServiceRecordedWithoutItsSpecIsRestarted(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, sleeper("svc", nil)))
	b.reconcile(d)
	pid := b.pidOf("svc")
	b.eng.Close()
	start, err := procStart(pid)
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf(`{"app/svc": {"pid": %d, "start": %d}}`, pid, start)
	if err := os.WriteFile(filepath.Join(b.state, servicesFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(b.path("/svc.pid"))
	b.open()
	b.adopted("app/svc", pid)
	if r := b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true); r.Drift {
		t.Fatal("a restart for an unknown spec is drift")
	}
	b.waitDead(pid)
	if b.pidOf("svc") == pid {
		t.Fatal("not restarted")
	}
}
