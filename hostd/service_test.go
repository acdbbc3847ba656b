package hostd

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// sleeper is a service that writes its pid to {root}/<name>.pid and sleeps.
func sleeper(name string, env map[string]string, restartOn ...string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindService, Env: env, RestartOn: restartOn,
		Command: []string{"/bin/sh", "-c", "echo $$ > {root}/" + name + ".pid; echo started $GREETING; exec sleep 60"}}
}

// pidOf waits for the service to write its pid and returns it.
func (b *bed) pidOf(name string) int {
	b.t.Helper()
	var pid int
	waitFor(b.t, 5*time.Second, name+" to write its pid", func() bool {
		c, err := os.ReadFile(b.path("/" + name + ".pid"))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(c)))
		return err == nil
	})
	return pid
}

// alive reports whether pid runs (a zombie has ended).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	f, err := procStatFields(pid)
	return err == nil && f[0] != "Z"
}

func (b *bed) waitDead(pid int) {
	b.t.Helper()
	waitFor(b.t, 5*time.Second, "pid "+strconv.Itoa(pid)+" to exit", func() bool { return !alive(pid) })
}

func TestServiceLifecycle(t *testing.T) {
	b := setup(t)
	conf := func(c string) hq.Resource { return file("conf", "/etc/svc.conf", c) }
	d := b.decl(mod("app", false, sleeper("svc", map[string]string{"GREETING": "hello"}, "conf"), conf("1")))
	b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true)
	pid := b.pidOf("svc")
	if !alive(pid) {
		t.Fatal("service not running")
	}
	waitFor(t, 5*time.Second, "the service log", func() bool {
		c, _ := os.ReadFile(b.eng.sup.logPath("app/svc"))
		return strings.Contains(string(c), "started hello")
	})

	// Unchanged: left alone.
	b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, false)
	if b.pidOf("svc") != pid {
		t.Fatal("an unchanged service was restarted")
	}

	// A file in restart_on changed after the service in declaration order: restarted late.
	os.Remove(b.path("/svc.pid"))
	d = b.decl(mod("app", false, sleeper("svc", map[string]string{"GREETING": "hello"}, "conf"), conf("2")))
	rs := b.reconcile(d)
	rs.want(t, "app/svc", hq.StateApplied, true, true)
	b.waitDead(pid)
	pid = b.pidOf("svc")

	// Its own spec changed: restarted.
	os.Remove(b.path("/svc.pid"))
	d = b.decl(mod("app", false, sleeper("svc", map[string]string{"GREETING": "again"}, "conf"), conf("2")))
	b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true)
	b.waitDead(pid)
	pid = b.pidOf("svc")
	waitFor(t, 5*time.Second, "the service log", func() bool {
		c, _ := os.ReadFile(b.eng.sup.logPath("app/svc"))
		return strings.Contains(string(c), "started again")
	})

	// It died: restarted, and that is drift.
	os.Remove(b.path("/svc.pid"))
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, 5*time.Second, "the supervisor to see the exit", func() bool { return !b.eng.sup.running(b.eng.sup.get("app/svc")) })
	if r := b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true); !r.Drift {
		t.Fatal("a dead service put back is not drift")
	}
	pid = b.pidOf("svc")

	// No longer declared: stopped.
	b.reconcile(b.decl(mod("app", false, conf("2"))))
	b.waitDead(pid)
	if b.eng.sup.get("app/svc") != nil {
		t.Fatal("an undeclared service is still supervised")
	}
}

func TestServiceDoesNotSeeHostdVariables(t *testing.T) {
	t.Setenv("HOSTD_TOKEN", "node-secret")
	b := setup(t)
	d := b.decl(mod("app", false, hq.Resource{Name: "env", Kind: hq.KindService,
		Command: []string{"/bin/sh", "-c", "env > {root}/env.txt; exec sleep 60"}}))
	b.reconcile(d).want(t, "app/env", hq.StateApplied, true, true)
	waitFor(t, 5*time.Second, "env.txt", func() bool { c, _ := os.ReadFile(b.path("/env.txt")); return len(c) > 0 })
	if strings.Contains(b.read("/env.txt"), "node-secret") {
		t.Fatal("the node token leaked into a service")
	}
}

func TestServiceThatExitsAtOnceFails(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, hq.Resource{Name: "bad", Kind: hq.KindService, Command: []string{"/bin/sh", "-c", "echo oops; exit 4"}}))
	r := b.reconcile(d).want(t, "app/bad", hq.StateFailed, true, false)
	if !strings.Contains(r.Error, "exit status 4") || !strings.HasSuffix(r.Error, ": oops") {
		t.Fatalf("error %q, want the exit status and what the service printed", r.Error)
	}
	// The next start's error carries what that run printed, not the log of the one before.
	d = b.decl(mod("app", false, hq.Resource{Name: "bad", Kind: hq.KindService, Command: []string{"/bin/sh", "-c", "echo no config >&2; exit 5"}}))
	r = b.reconcile(d).want(t, "app/bad", hq.StateFailed, true, false)
	if !strings.HasSuffix(r.Error, ": no config") || strings.Contains(r.Error, "oops") {
		t.Fatalf("error %q, want what the last run printed only", r.Error)
	}
	d = b.decl(mod("app", false, hq.Resource{Name: "missing", Kind: hq.KindService, Command: []string{"/no/such/binary"}}))
	b.reconcile(d).want(t, "app/missing", hq.StateFailed, true, false)
}

func TestServiceHealth(t *testing.T) {
	var healthy atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	b := setup(t)
	svc := sleeper("web", nil)
	svc.Health = &hq.Health{HTTP: srv.URL + "/healthz"}
	d := b.decl(mod("app", false, svc, file("after", "/etc/after", "a")))

	// Never healthy: failed after the health timeout, and left running.
	r := b.reconcile(d).want(t, "app/web", hq.StateFailed, true, false)
	if !strings.Contains(r.Error, "did not answer 2xx") {
		t.Fatalf("error %q", r.Error)
	}
	if p := b.eng.sup.get("app/web"); p == nil || !b.eng.sup.running(p) {
		t.Fatal("an unhealthy service was stopped")
	}

	// Healthy now: the next attempt looks again without a restart.
	pid := b.pidOf("web")
	healthy.Store(true)
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, false)
	if b.pidOf("web") != pid {
		t.Fatal("restarted")
	}
}

func TestCloseStopsServices(t *testing.T) {
	b := setup(t)
	term := hq.Resource{Name: "stubborn", Kind: hq.KindService,
		Command: []string{"/bin/sh", "-c", "trap '' TERM; echo $$ > {root}/stubborn.pid; while :; do sleep 0.1; done"}}
	b.reconcile(b.decl(mod("app", false, sleeper("svc", nil), term)))
	pids := []int{b.pidOf("svc"), b.pidOf("stubborn")}
	began := time.Now()
	b.eng.cfg.StopServicesOnExit = true
	b.eng.Close()
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("pid %d survived Close", pid)
		}
	}
	if took := time.Since(began); took > 4*time.Second {
		t.Fatalf("Close took %s: services were stopped one after the other", took)
	}
}

// reader is a service that appends what {root}/etc/svc.conf held when it started (or "none")
// to {root}/saw, then sleeps.
func reader(name string, restartOn ...string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindService, RestartOn: restartOn,
		Command: []string{"/bin/sh", "-c", "{ cat {root}/etc/svc.conf 2>/dev/null || echo none; echo; } >> {root}/saw; exec sleep 60"}}
}

// sawLast waits for the service's latest start to have read want.
func (b *bed) sawLast(want string) {
	b.t.Helper()
	waitFor(b.t, 5*time.Second, "the service to start on "+want, func() bool {
		c, err := os.ReadFile(b.path("/saw"))
		lines := strings.Fields(string(c))
		return err == nil && len(lines) > 0 && lines[len(lines)-1] == want
	})
}

func TestServiceStartedBeforeItsFileIsCreatedRestarts(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, reader("svc", "conf"), file("conf", "/etc/svc.conf", "v1")))
	rs := b.reconcile(d)
	rs.want(t, "app/svc", hq.StateApplied, true, true)
	rs.want(t, "app/conf", hq.StateApplied, true, true)
	b.sawLast("v1")
}

func TestUnhealthyNewServiceIsStoppedWhenNoLongerDeclared(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "never", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	b := setup(t)
	svc := sleeper("web", nil)
	svc.Health = &hq.Health{HTTP: srv.URL}
	b.reconcile(b.decl(mod("app", false, svc))).want(t, "app/web", hq.StateFailed, true, false)
	pid := b.pidOf("web")
	if en := b.eng.ledger.Resources["app/web"]; en == nil {
		t.Fatal("a service hostd started is not in the ledger")
	}

	b.reconcile(b.decl(mod("other", false, file("x", "/etc/x", "x"))))
	b.waitDead(pid)
	if b.eng.sup.get("app/web") != nil {
		t.Fatal("an undeclared service is still supervised")
	}
}

func TestRestartPendingBehindAGateIsKeptForTheNextReconcile(t *testing.T) {
	b := setup(t)
	conf := func(c string) hq.Resource { return file("conf", "/etc/svc.conf", c) }
	migrate := func(cmd string) hq.Resource {
		return hq.Resource{Name: "migrate", Kind: hq.KindAction, Command: []string{"/bin/sh", "-c", cmd}}
	}
	b.reconcile(b.decl(mod("app", false, conf("v1"), migrate("true"), reader("svc", "conf")))).want(t, "app/svc", hq.StateApplied, true, true)
	b.sawLast("v1")

	// conf changes, migrate fails: svc waits behind the gate.
	d := b.decl(mod("app", false, conf("v2"), migrate("test -f {root}/go"), reader("svc", "conf")))
	rs := b.reconcile(d)
	rs.want(t, "app/conf", hq.StateApplied, true, true)
	rs.want(t, "app/migrate", hq.StateFailed, true, false)
	rs.want(t, "app/svc", hq.StatePending, false, false)
	if en := b.eng.ledger.Resources["app/svc"]; en == nil || !en.Restart {
		t.Fatalf("svc's ledger entry %+v does not say it must restart", en)
	}
	b.reconcile(d).want(t, "app/svc", hq.StatePending, false, false)

	// migrate succeeds: svc restarts on the conf that changed reconciles ago.
	b.write("/go", "", 0o644)
	b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, true)
	b.sawLast("v2")
	if en := b.eng.ledger.Resources["app/svc"]; en == nil || en.Restart {
		t.Fatalf("svc's ledger entry %+v after it restarted", en)
	}
	b.reconcile(d).want(t, "app/svc", hq.StateApplied, true, false)
}

func TestServiceChangedToAnotherKindIsStopped(t *testing.T) {
	for _, c := range []struct {
		name string
		to   hq.Resource
	}{
		{"file", file("svc", "/etc/svc.conf", "x")},
		{"action", hq.Resource{Name: "svc", Kind: hq.KindAction, Command: []string{"true"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t)
			b.reconcile(b.decl(mod("app", false, sleeper("svc", nil))))
			pid := b.pidOf("svc")
			b.reconcile(b.decl(mod("app", false, c.to))).want(t, "app/svc", hq.StateApplied, true, true)
			b.waitDead(pid)
			if b.eng.sup.get("app/svc") != nil {
				t.Fatal("a service that is now another kind is still supervised")
			}
		})
	}
}

// hungHealth serves a health URL that fails (500) for the process of name whose pid is in
// hung, or for every process while all is set; otherwise it answers 204.
func (b *bed) hungHealth(name string, hung *atomic.Int64, all *atomic.Bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := b.eng.sup.get(name)
		if all.Load() || p != nil && int64(p.pid) == hung.Load() {
			http.Error(w, "hung", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.t.Cleanup(srv.Close)
	return srv
}

// hungSwitch decides what a health URL of hungHealth answers: 500 for the process whose pid
// is in pid, or for every process while all is set.
type hungSwitch struct {
	pid atomic.Int64
	all atomic.Bool
	url string
}

// hungWeb is the sleeper "web" (module app) with a health URL hungHealth serves, and the
// switch of that URL.
func (b *bed) hungWeb() (hq.Resource, *hungSwitch) {
	h := &hungSwitch{}
	h.url = b.hungHealth("app/web", &h.pid, &h.all).URL + "/healthz"
	web := sleeper("web", nil)
	web.Health = &hq.Health{HTTP: h.url}
	return web, h
}

func TestRunningServiceThatTurnsUnhealthyIsRestarted(t *testing.T) {
	b := setup(t)
	svc, health := b.hungWeb()
	d := b.decl(mod("app", false, svc))
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, true)
	pid := b.pidOf("web")
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, false)
	if b.pidOf("web") != pid {
		t.Fatal("a healthy service was restarted")
	}

	// Alive but hung: restarted once, and healthy again.
	health.pid.Store(int64(pid))
	os.Remove(b.path("/web.pid"))
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, true)
	b.waitDead(pid)
	pid = b.pidOf("web")

	// Hung, and so is the process that replaces it: failed, with what the check saw first.
	health.all.Store(true)
	os.Remove(b.path("/web.pid"))
	r := b.reconcile(d).want(t, "app/web", hq.StateFailed, true, false)
	if want := "unhealthy: GET " + health.url + ": 500 Internal Server Error"; !strings.HasPrefix(r.Error, want) {
		t.Fatalf("error %q, want it to start with %q", r.Error, want)
	}
	b.waitDead(pid)
	pid = b.pidOf("web")
	if p := b.eng.sup.get("app/web"); p == nil || !b.eng.sup.running(p) {
		t.Fatal("a service still unhealthy after its restart was stopped")
	}

	// In back-off: not restarted again, reported with its last error.
	b.manual = true
	b.now = b.now.Add(testInterval / 2)
	if rr := b.reconcile(d).want(t, "app/web", hq.StateFailed, false, false); rr.Error != r.Error {
		t.Fatalf("backed-off error %q, want %q", rr.Error, r.Error)
	}
	if b.pidOf("web") != pid {
		t.Fatal("a service in back-off was restarted")
	}

	// Due again and healthy: applied without another restart.
	health.all.Store(false)
	b.now = b.now.Add(testInterval)
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, false)
	if b.pidOf("web") != pid {
		t.Fatal("restarted")
	}
}
