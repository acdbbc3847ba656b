package hostd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
)

// containerBed is a bed whose engine runs containers in a podman of the test's own.
func containerBed(t *testing.T) (*bed, *podmantest.Env) {
	t.Helper()
	env := podmantest.New(t)
	env.Setenv(t)
	b := setup(t)
	b.eng.cfg.HealthTimeout = 10 * time.Second
	b.eng.cfg.StartGrace = 300 * time.Millisecond
	b.eng.cfg.StopTimeout = time.Second
	b.eng.ctrs.stopTimeout = time.Second
	return b, env
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// state is what podman says of a container: its id and state, or "" when there is none.
func state(env *podmantest.Env, name string) (id, st string) {
	out := env.Podman("ps", "-a", "--filter", "name=^"+name+"$", "--format", "json")
	var cs []struct{ ID, State string }
	if err := json.Unmarshal([]byte(out), &cs); err != nil || len(cs) > 1 {
		panic(fmt.Sprintf("podman ps: %q: %v", out, err))
	}
	if len(cs) == 0 {
		return "", ""
	}
	return cs[0].ID, cs[0].State
}

// A container is pulled, created and started with its labels, and serves. Its process is
// recorded once it runs: a reconcile that finds that process still alive asks podman nothing.
func TestContainerRunsAndANoOpListsOnce(t *testing.T) {
	b, env := containerBed(t)
	port := podmantest.FreePort(t)
	d := b.decl(mod("app", true, podmantest.Web("web", env.Image, port)))
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, true)
	if got := get(t, fmt.Sprintf("http://127.0.0.1:%d/", port)); got != "hello from the image\n" {
		t.Fatalf("served %q", got)
	}
	labels := env.Podman("inspect", "--format", "{{index .Config.Labels \"hq.node\"}} {{index .Config.Labels \"hq.module\"}} {{index .Config.Labels \"hq.resource\"}}", "hq-app-web")
	if labels != "web-1 app web" {
		t.Fatalf("labels %q", labels)
	}
	for i, want := range []int64{0, 0} {
		before := b.eng.ctrs.cli.calls.Load()
		b.reconcile(d).want(t, "app/web", hq.StateApplied, true, false)
		if calls := b.eng.ctrs.cli.calls.Load() - before; calls != want {
			t.Fatalf("reconcile %d that changed nothing ran the container CLI %d times, want %d", i+2, calls, want)
		}
	}
}

// Any change of the spec recreates the container, and the result says what changed; a volume
// whose host path moved is named with both paths, since nothing was copied.
func TestContainerSpecChangeRecreates(t *testing.T) {
	b, env := containerBed(t)
	port := podmantest.FreePort(t)
	vol := func(host string) func(*hq.Resource) {
		return func(r *hq.Resource) { r.Volumes = []string{host + ":/data"} }
	}
	b.reconcile(b.decl(mod("app", true, podmantest.Web("db", env.Image, port, vol("/srv/old")))))
	id1, _ := state(env, "hq-app-db")
	rs := b.reconcile(b.decl(mod("app", true, podmantest.Web("db", env.Image, port, vol("/srv/new"), func(r *hq.Resource) { r.Env = map[string]string{"A": "1"} }))))
	r := rs.want(t, "app/db", hq.StateApplied, true, true)
	want := "app/db recreated (env, volumes changed); volume /data of app/db now at /srv/new (was /srv/old): nothing was copied"
	if r.Note != want {
		t.Fatalf("note %q, want %q", r.Note, want)
	}
	id2, st := state(env, "hq-app-db")
	if id2 == id1 || st != "running" {
		t.Fatalf("after the change: %s %s (was %s), want a new running container", id2, st, id1)
	}
	if _, err := os.Stat(filepath.Join(b.root, "srv", "new")); err != nil {
		t.Fatalf("the new volume's host path was not made under the root: %v", err)
	}
	if out := env.Podman("ps", "-a", "--format", "{{.Names}}"); strings.Contains(out, ".prev") || strings.Contains(out, ".next") {
		t.Fatalf("containers left aside: %s", out)
	}
}

// In a module that is not taken, a container is created and not started, and held; the take
// starts it.
func TestContainerWaitsOnTake(t *testing.T) {
	b, env := containerBed(t)
	port := podmantest.FreePort(t)
	r := b.reconcile(b.decl(mod("app", false, podmantest.Web("web", env.Image, port))))["app/web"]
	if r.Outcome != hq.StateHeld || !strings.Contains(r.HoldReason, "until app is taken") {
		t.Fatalf("untaken: %+v", r)
	}
	if _, st := state(env, "hq-app-web"); st != "created" {
		t.Fatalf("untaken: the container is %q, want created", st)
	}
	b.reconcile(b.decl(mod("app", true, podmantest.Web("web", env.Image, port)))).want(t, "app/web", hq.StateApplied, true, true)
	if _, st := state(env, "hq-app-web"); st != "running" {
		t.Fatalf("taken: the container is %q, want running", st)
	}
}

// A container removed or stopped behind hostd's back is put back, as drift; one of its name
// that hostd did not create fails the resource, and is never touched.
func TestContainerDriftAndForeignNames(t *testing.T) {
	b, env := containerBed(t)
	port := podmantest.FreePort(t)
	d := b.decl(mod("app", true, podmantest.Web("web", env.Image, port)))
	b.reconcile(d) // records its process: what follows is seen without a listing
	env.Podman("rm", "-f", "-t", "0", "hq-app-web")
	r := b.reconcile(d).want(t, "app/web", hq.StateApplied, true, true)
	if !r.Drift || r.DriftDetail != "container missing" {
		t.Fatalf("after rm: %+v", r)
	}
	b.reconcile(d)
	env.Podman("stop", "-t", "0", "hq-app-web")
	if r := b.reconcile(d)["app/web"]; !r.Drift || !strings.Contains(r.DriftDetail, "container exited") {
		t.Fatalf("after stop: %+v", r)
	}

	env.Podman("run", "-d", "--name", "hq-app-other", env.Image, "sleep", "600")
	id, _ := state(env, "hq-app-other")
	d = b.decl(mod("app", true, podmantest.Web("web", env.Image, port), hq.Resource{Name: "other", Kind: hq.KindContainer, Image: env.Image, Command: []string{"sleep", "600"}}))
	r = b.reconcile(d)["app/other"]
	if r.Outcome != hq.StateFailed || !strings.Contains(r.Error, "hostd did not create") {
		t.Fatalf("a foreign container of the name: %+v", r)
	}
	if now, st := state(env, "hq-app-other"); now != id || st != "running" {
		t.Fatalf("the foreign container was touched: %s %s", now, st)
	}
}

// Containers are podman's: a new engine (a restarted hostd) finds them running and keeps them.
func TestContainerOutlivesTheEngine(t *testing.T) {
	b, env := containerBed(t)
	port := podmantest.FreePort(t)
	d := b.decl(mod("app", true, podmantest.Web("web", env.Image, port)))
	b.reconcile(d)
	id, _ := state(env, "hq-app-web")
	b.restart()
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, false)
	if now, st := state(env, "hq-app-web"); now != id || st != "running" {
		t.Fatalf("after a restart: %s %s, was %s", now, st, id)
	}
	// No longer declared: stopped and removed.
	b.reconcile(b.decl(mod("app", true)))
	if id, _ := state(env, "hq-app-web"); id != "" {
		t.Fatal("a container no longer declared is still there")
	}
}

// A job runs once per spec; one that exits non-zero fails with what it wrote, and gates what
// follows it.
func TestJobRunsOnceAndGates(t *testing.T) {
	b, env := containerBed(t)
	job := func(name, script string) hq.Resource {
		return hq.Resource{Name: name, Kind: hq.KindJob, Image: env.Image, Command: []string{"sh", "-c", script},
			Volumes: []string{"/srv/job:/out"}}
	}
	after := hq.Resource{Name: "after", Kind: hq.KindFile, Path: "/etc/after", Content: "x"}
	d := b.decl(mod("app", true, job("migrate", "echo ran >> /out/log"), after))
	rs := b.reconcile(d)
	rs.want(t, "app/migrate", hq.StateApplied, true, true)
	rs.want(t, "app/after", hq.StateApplied, true, true)
	b.reconcile(d).want(t, "app/migrate", hq.StateApplied, true, false)
	if log, _ := os.ReadFile(filepath.Join(b.root, "srv", "job", "log")); string(log) != "ran\n" {
		t.Fatalf("the job ran %q, want once", log)
	}

	rs = b.reconcile(b.decl(mod("app", true, job("migrate", "echo schema too new; exit 1"), after)))
	r := rs["app/migrate"]
	if r.Outcome != hq.StateFailed || !strings.Contains(r.Error, "schema too new") {
		t.Fatalf("a failing job: %+v", r)
	}
	if a := rs["app/after"]; a.Outcome != hq.StatePending || a.BlockedBy != "app/migrate" {
		t.Fatalf("after a failing job: %+v, want pending, blocked by app/migrate", a)
	}
}

// A group's containers switch together: when the second's health check fails, the first's
// previous container comes back, serving.
func TestContainerGroupRollsBack(t *testing.T) {
	b, env := containerBed(t)
	b.eng.cfg.HealthTimeout = 2 * time.Second
	p1, p2 := podmantest.FreePort(t), podmantest.FreePort(t)
	grouped := func(r hq.Resource) hq.Resource { r.Group = "pair"; return r }
	b.reconcile(b.decl(mod("app", true, grouped(podmantest.Web("a", env.Image, p1)), grouped(podmantest.Web("b", env.Image, p2)))))
	idA, _ := state(env, "hq-app-a")
	broken := grouped(podmantest.Web("b", env.Image, p2, func(r *hq.Resource) { r.Health.HTTP = fmt.Sprintf("http://127.0.0.1:%d/nothing-here", p2) }))
	changedA := grouped(podmantest.Web("a", env.Image, p1, func(r *hq.Resource) { r.Env = map[string]string{"V": "2"} }))
	rs := b.reconcile(b.decl(mod("app", true, changedA, broken)))
	if rs["app/b"].Outcome != hq.StateFailed || rs["app/a"].Outcome == hq.StateApplied {
		t.Fatalf("a group whose member failed its health check: a %+v, b %+v", rs["app/a"], rs["app/b"])
	}
	if now, st := state(env, "hq-app-a"); now != idA || st != "running" {
		t.Fatalf("the first member after the rollback: %s %s, want its previous container %s running", now, st, idA)
	}
	if c := rs["app/a"].Container; c == nil || c.ID != idA || !c.EarlierSpec || c.Spec == changedA.Digest() {
		t.Fatalf("the first member's status after the rollback: %+v, want its previous container %s, of an earlier spec", c, idA)
	}
	if got := get(t, fmt.Sprintf("http://127.0.0.1:%d/", p1)); got != "hello from the image\n" {
		t.Fatalf("the previous container serves %q", got)
	}
}

// An image that cannot be pulled fails with what the engine said.
func TestContainerPullFailure(t *testing.T) {
	b, _ := containerBed(t)
	missing := "127.0.0.1:1/nothing@sha256:" + strings.Repeat("0", 64)
	r := b.reconcile(b.decl(mod("app", true, hq.Resource{Name: "web", Kind: hq.KindContainer, Image: missing})))["app/web"]
	if r.Outcome != hq.StateFailed || !strings.Contains(r.Error, "pull") {
		t.Fatalf("an image nothing publishes: %+v", r)
	}
}

// A container restarts when something in its restart_on changed before it in the reconcile.
func TestContainerRestartsOn(t *testing.T) {
	b, env := containerBed(t)
	port := podmantest.FreePort(t)
	conf := func(v string) hq.Resource {
		return hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/srv/conf/app.conf", Content: v}
	}
	app := podmantest.Web("web", env.Image, port, func(r *hq.Resource) { r.RestartOn = []string{"conf"}; r.Volumes = []string{"/srv/conf:/conf:ro"} })
	b.reconcile(b.decl(mod("app", true, conf("1"), app)))
	started := env.Podman("inspect", "--format", "{{.State.StartedAt}}", "hq-app-web")
	b.reconcile(b.decl(mod("app", true, conf("1"), app))).want(t, "app/web", hq.StateApplied, true, false)
	b.reconcile(b.decl(mod("app", true, conf("2"), app))).want(t, "app/web", hq.StateApplied, true, true)
	if again := env.Podman("inspect", "--format", "{{.State.StartedAt}}", "hq-app-web"); again == started {
		t.Fatal("the container did not restart after its configuration changed")
	}
}

// A container of a job's name that hostd did not create is not removed to make room for it.
func TestJobLeavesAForeignContainerAlone(t *testing.T) {
	b, env := containerBed(t)
	env.Podman("run", "-d", "--name", "hq-app-migrate", "--label", "hq.node=web-1", env.Image, "sleep", "600")
	id, _ := state(env, "hq-app-migrate")
	r := b.reconcile(b.decl(mod("app", true, hq.Resource{Name: "migrate", Kind: hq.KindJob, Image: env.Image, Command: []string{"true"}})))["app/migrate"]
	if r.Outcome != hq.StateFailed || !strings.Contains(r.Error, "belongs to") {
		t.Fatalf("a job whose name another container has: %+v", r)
	}
	if now, st := state(env, "hq-app-migrate"); now != id || st != "running" {
		t.Fatalf("the other container was touched: %s %s", now, st)
	}
}
