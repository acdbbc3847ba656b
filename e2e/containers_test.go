package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
	"github.com/meshhq/hq/internal/testdb"
)

// fetch GETs url and returns its body, or "" when nothing answers 200.
func fetch(url string) string {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// ctrState is what podman says of a container: its id and state, "" when there is none.
func ctrState(t *testing.T, env *podmantest.Env, name string) (id, state string) {
	t.Helper()
	var cs []struct{ ID, State string }
	if err := json.Unmarshal([]byte(env.Podman("ps", "-a", "--filter", "name=^"+name+"$", "--format", "json")), &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) == 0 {
		return "", ""
	}
	return cs[0].ID, cs[0].State
}

// convergedAt waits for node to be converged at a generation of at least gen.
func convergedAt(t *testing.T, c *client, node string, gen int64, what string) hq.NodeView {
	t.Helper()
	var v hq.NodeView
	waitFor(t, 60*time.Second, what, func() bool {
		v = c.node(node)
		return v.Status == hq.StatusConverged && v.AppliedGeneration >= gen
	})
	return v
}

// A container pulled from a registry by digest serves; a new digest recreates it; a volume
// whose host path changed recreates it and the report line names both paths; a digest nothing
// publishes is stuck, never applied, with the pull's error.
func TestContainerLifecycle(t *testing.T) {
	env := podmantest.New(t)
	image := env.Registry()
	second := env.Publish(env.Build("bb2", "the second image\n"))
	ctl := startController(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=2")
	c := newClient(t, ctl.url)
	newHost(t, c, ctl.url, "web-1", env.Vars...)
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	vol := func(host string) func(*hq.Resource) {
		return func(r *hq.Resource) { r.Volumes = []string{host + ":/data"} }
	}

	c.putModule("app", podmantest.Web("web", image, port, vol("/srv/a")))
	gen := c.assign("web-1", "app", true)
	convergedAt(t, c, "web-1", gen, "web-1 converged on the first image")
	if got := fetch(url); got != "hello from the image\n" {
		t.Fatalf("the container serves %q", got)
	}
	first, _ := ctrState(t, env, "hq-app-web")

	c.putModule("app", podmantest.Web("web", second, port, vol("/srv/a")))
	convergedAt(t, c, "web-1", c.node("web-1").Generation, "web-1 converged on the second image")
	if got := fetch(url); got != "the second image\n" {
		t.Fatalf("after the new digest the container serves %q", got)
	}
	if id, _ := ctrState(t, env, "hq-app-web"); id == first {
		t.Fatal("a new image digest did not recreate the container")
	}

	c.putModule("app", podmantest.Web("web", second, port, vol("/srv/b")))
	convergedAt(t, c, "web-1", c.node("web-1").Generation, "web-1 converged on the new volume")
	want := "volume /data of app/web now at /srv/b (was /srv/a): nothing was copied"
	if !slices.ContainsFunc(c.reports("web-1"), func(r hq.ReportView) bool { return strings.Contains(r.Summary, want) }) {
		t.Fatalf("no report line says %q: %+v", want, c.reports("web-1"))
	}

	ghost := image[:strings.Index(image, "@")] + "@sha256:" + strings.Repeat("0", 64)
	c.putModule("ghost", hq.Resource{Name: "web", Kind: hq.KindContainer, Image: ghost})
	c.assign("web-1", "ghost", true)
	var r hq.ResourceView
	waitFor(t, 60*time.Second, "ghost/web stuck", func() bool {
		r = resourceOf(c.node("web-1"), "ghost", "web")
		return r.State == hq.StateStuck
	})
	if !r.NeverApplied || !strings.Contains(r.LastError, "pull") {
		t.Fatalf("ghost/web: %+v, want never applied with the pull's error", r)
	}
}

// Assigned without a take, a container is created, not started, and held: the node waits on
// the take. The take starts it. Removed behind hostd's back, it is put back as drift; hostd
// killed, the container runs on and the next hostd adopts it.
func TestContainerTakeDriftAndRestart(t *testing.T) {
	env := podmantest.New(t)
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	token, dir := c.register("web-1"), t.TempDir()
	root, state := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	os.MkdirAll(root, 0o755)
	h := startHost(t, ctl.url, "web-1", token, root, state, env.Vars...)
	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	c.putModule("app", podmantest.Web("web", env.Image, port))
	c.assign("web-1", "app", false)
	waitFor(t, 60*time.Second, "web-1 waiting on take", func() bool {
		v := c.node("web-1")
		return v.Status == hq.StatusWaitingOnTake && findLine(v.Lines, "waiting on take: app (1 held)") != ""
	})
	if _, st := ctrState(t, env, "hq-app-web"); st != "created" {
		t.Fatalf("before the take the container is %q, want created", st)
	}
	if !slices.ContainsFunc(c.status().Lines, func(l string) bool { return strings.Contains(l, "waiting on take: app") }) {
		t.Fatalf("/status does not say web-1 waits on a take: %v", c.status().Lines)
	}
	gen := c.take("web-1", "app")
	convergedAt(t, c, "web-1", gen, "web-1 converged after the take")
	if fetch(url) == "" {
		t.Fatal("the container does not serve after the take")
	}

	before := len(c.drifts("web-1"))
	env.Podman("rm", "-f", "-t", "0", "hq-app-web")
	if d := driftOf(t, c, "web-1", "app/web", before); d.Detail != "container missing" {
		t.Fatalf("drift detail %q", d.Detail)
	}
	waitFor(t, 30*time.Second, "the container put back", func() bool { return fetch(url) != "" })

	id, _ := ctrState(t, env, "hq-app-web")
	h.kill()
	if now, st := ctrState(t, env, "hq-app-web"); now != id || st != "running" {
		t.Fatalf("after kill -9 of hostd the container is %s %s, was %s", now, st, id)
	}
	restarted := time.Now()
	startHost(t, ctl.url, "web-1", token, root, state, env.Vars...)
	waitFor(t, 30*time.Second, "the new hostd to report", func() bool {
		v := c.node("web-1")
		return v.LastReportAt != nil && v.LastReportAt.After(restarted) && v.Status == hq.StatusConverged
	})
	if now, st := ctrState(t, env, "hq-app-web"); now != id || st != "running" {
		t.Fatalf("the new hostd did not adopt the container: %s %s, was %s", now, st, id)
	}
}

// A group of two containers whose second fails its health check: the first's previous
// container comes back and serves, and the node is never converged on the change.
func TestContainerGroupComesBack(t *testing.T) {
	env := podmantest.New(t)
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	newHost(t, c, ctl.url, "web-1", env.Vars...)
	p1, p2 := freePort(t), freePort(t)
	grouped := func(r *hq.Resource) { r.Group = "pair" }
	c.putModule("app", podmantest.Web("a", env.Image, p1, grouped), podmantest.Web("b", env.Image, p2, grouped))
	gen := c.assign("web-1", "app", true)
	convergedAt(t, c, "web-1", gen, "the pair converged")
	idA, _ := ctrState(t, env, "hq-app-a")

	c.putModule("app",
		podmantest.Web("a", env.Image, p1, grouped, func(r *hq.Resource) { r.Env = map[string]string{"V": "2"} }),
		podmantest.Web("b", env.Image, p2, grouped, func(r *hq.Resource) { r.Health.HTTP = fmt.Sprintf("http://127.0.0.1:%d/missing", p2) }))
	changed := c.node("web-1").Generation
	var seen []hq.Status
	waitFor(t, 90*time.Second, "the group to fail", func() bool {
		v := c.node("web-1")
		if v.AppliedGeneration >= changed || v.Generation == changed {
			seen = append(seen, v.Status)
		}
		return resourceOf(v, "app", "b").State == hq.StateFailed || resourceOf(v, "app", "b").State == hq.StateStuck
	})
	if slices.Contains(seen, hq.StatusConverged) {
		t.Fatalf("the node read converged while its group could not apply: %v", seen)
	}
	if now, st := ctrState(t, env, "hq-app-a"); now != idA || st != "running" {
		t.Fatalf("a after the rollback: %s %s, want its previous container %s running", now, st, idA)
	}
	if got := fetch(fmt.Sprintf("http://127.0.0.1:%d/", p1)); got != "hello from the image\n" {
		t.Fatalf("a's previous container serves %q", got)
	}
}

// A job that exits 1 gates the resource after it, and the report line and the node say which.
func TestJobFailureGates(t *testing.T) {
	env := podmantest.New(t)
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	newHost(t, c, ctl.url, "web-1", env.Vars...)
	c.putModule("app",
		hq.Resource{Name: "migrate", Kind: hq.KindJob, Image: env.Image, Command: []string{"sh", "-c", "echo schema is newer than this build; exit 1"}},
		hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x\n"})
	c.assign("web-1", "app", true)
	waitFor(t, 60*time.Second, "the job failed and conf pending", func() bool {
		v := c.node("web-1")
		return resourceOf(v, "app", "migrate").State == hq.StateFailed && resourceOf(v, "app", "conf").BlockedBy == "app/migrate"
	})
	v := c.node("web-1")
	if m := resourceOf(v, "app", "migrate"); !strings.Contains(m.LastError, "schema is newer") {
		t.Fatalf("the job's error %q does not carry what it wrote", m.LastError)
	}
	if v.LastReport == nil || !strings.Contains(v.LastReport.Summary, "1 failed") || !strings.Contains(v.LastReport.Summary, "1 pending") {
		t.Fatalf("report line %+v", v.LastReport)
	}
}

// The controller refuses, at upload, an image a container CLI would read from a file or a store
// of its own (a transport) and a resource named like a staged container; at assignment, two
// resources whose containers would share a name on the node.
func TestContainerNamesAndImagesRefusedAtTheController(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	c.register("web-1")
	const digest = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	ctr := func(name, image string) hq.Resource {
		return hq.Resource{Name: name, Kind: hq.KindContainer, Image: image}
	}
	for _, tc := range []struct {
		r     hq.Resource
		field string
	}{
		{ctr("web", "oci-archive:x"+digest), "resources[0].image"},
		{ctr("web", "dir:x"+digest), "resources[0].image"},
		{ctr("web", "containers-storage:x"+digest), "resources[0].image"},
		{ctr("web", "docker-archive:x"+digest), "resources[0].image"},
		{ctr("web.prev", "localhost/x"+digest), "resources[0].name"},
	} {
		status, body := c.raw("PUT", "/modules/bad", map[string][]hq.Resource{"resources": {tc.r}})
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), tc.field) {
			t.Fatalf("%s %s: %d %s, want 422 naming %s", tc.r.Name, tc.r.Image, status, body, tc.field)
		}
	}

	c.putModule("a", ctr("b-c", "localhost/x"+digest))
	c.putModule("a-b", ctr("c", "localhost/x"+digest))
	gen := c.assign("web-1", "a", true)
	status, body := c.raw("PUT", "/nodes/web-1/assignments/a-b", map[string]bool{"taken": true})
	if status != http.StatusConflict || !strings.Contains(string(body), "hq-a-b-c") {
		t.Fatalf("a-b/c beside a/b-c: %d %s, want 409 naming hq-a-b-c", status, body)
	}
	if after := c.node("web-1"); after.Generation != gen || len(after.Assignments) != 1 {
		t.Fatalf("the refused assignment changed web-1: %+v", after)
	}
}

// In one module, app reaches db by its resource's name over the module's network; app's env
// value is inside it and on no podman command line hostd ran nor in any label; with restart
// always podman brings app back when its process is killed, with no hostd in between: hostd is
// stopped first.
func TestContainerNetworkEnvAndRestart(t *testing.T) {
	env := podmantest.New(t)
	cli, argv := env.ArgvLog()
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	h := newHost(t, c, ctl.url, "web-1", append(env.Vars, "HOSTD_CONTAINER_CLI="+cli)...)
	secret := fmt.Sprintf("s3cr3t-%d", time.Now().UnixNano())
	db := hq.Resource{Name: "db", Kind: hq.KindContainer, Image: env.Image, Command: []string{"httpd", "-f", "-p", "8080", "-h", "/www"}}
	app := hq.Resource{Name: "app", Kind: hq.KindContainer, Image: env.Image,
		Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"},
		Env:     map[string]string{"DB_PASSWORD": secret}, Restart: hq.RestartAlways, Memory: "64m", Cpus: "0.5", LogMaxSize: "1m"}
	c.putModule("shop", db, app)
	gen := c.assign("web-1", "shop", true)
	convergedAt(t, c, "web-1", gen, "web-1 converged on db and app")

	if got := env.Podman("exec", "hq-shop-app", "wget", "-q", "-O-", "http://db:8080/"); got != "hello from the image" {
		t.Fatalf("app asked http://db:8080/ and got %q", got)
	}
	if got := env.Podman("exec", "hq-shop-app", "sh", "-c", `echo "$DB_PASSWORD"`); got != secret {
		t.Fatalf("DB_PASSWORD in app: %q", got)
	}
	for _, name := range []string{"hq-shop-app", "hq-shop-db"} {
		if labels := env.Podman("inspect", "--format", "{{json .Config.Labels}}", name); strings.Contains(labels, secret) {
			t.Fatalf("%s's labels hold the env value: %s", name, labels)
		}
	}
	log, err := os.ReadFile(argv)
	if err != nil || !strings.Contains(string(log), "create") {
		t.Fatalf("the CLI's log: %v\n%s", err, log)
	}
	if strings.Contains(string(log), secret) {
		t.Fatalf("a podman command line holds the env value:\n%s", log)
	}

	h.stop()
	pid, err := strconv.Atoi(env.Podman("inspect", "--format", "{{.State.Pid}}", "hq-shop-app"))
	if err != nil || pid <= 0 {
		t.Fatalf("app's process: %d %v", pid, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "podman to restart app", func() bool {
		f := strings.Fields(env.Podman("inspect", "--format", "{{.State.Status}} {{.State.Pid}} {{.RestartCount}}", "hq-shop-app"))
		return len(f) == 3 && f[0] == "running" && f[1] != strconv.Itoa(pid) && f[2] != "0"
	})
	if got := env.Podman("exec", "hq-shop-app", "wget", "-q", "-O-", "http://db:8080/"); got != "hello from the image" {
		t.Fatalf("after its restart app asked http://db:8080/ and got %q", got)
	}
}
