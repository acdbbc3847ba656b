package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/meshhq/hq"
	hqclient "github.com/meshhq/hq/client"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/metrics"
)

// opsHost registers a node through the client package and starts its hostd.
func opsHost(t *testing.T, c *hqclient.Client, node string, env ...string) *host {
	t.Helper()
	reg, err := c.Register(context.Background(), node)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	root, state := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	os.MkdirAll(root, 0o755)
	return startHost(t, c.Base, node, reg.Token, root, state, env...)
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// scrape reads a metrics page with the Prometheus parser, as a scraper would.
func scrape(t *testing.T, page string) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(page))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, page)
	}
	return metrics.Flatten(fams)
}

// TestMetricsAgreeWithStatus scrapes /metrics of a controller with a converged node and two
// nodes stuck on one resource, and compares every figure with what /status and the nodes say.
func TestMetricsAgreeWithStatus(t *testing.T) {
	ctx := context.Background()
	ctl := startController(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=2")
	c := hqclient.New(ctl.url, adminToken)
	prom := filepath.Join(t.TempDir(), "hostd.prom")
	fast := "HOSTD_INTERVAL=300ms"
	opsHost(t, c, "ok-1", fast, "HOSTD_METRICS_FILE="+prom)
	opsHost(t, c, "bad-1", fast)
	opsHost(t, c, "bad-2", fast)
	must[hqclient.PutResult](t)(c.PutModule(ctx, "motd", []hq.Resource{{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "hi\n"}}))
	must[hqclient.PutResult](t)(c.PutModule(ctx, "bad", []hq.Resource{{Name: "conf", Kind: hq.KindFile, Path: "/etc/bad.conf", Content: "x\n", Validate: []string{"/bin/false"}}}))
	for _, n := range []string{"ok-1", "bad-1", "bad-2"} {
		must[int64](t)(c.Assign(ctx, n, "motd", false))
	}
	for _, n := range []string{"bad-1", "bad-2"} {
		must[int64](t)(c.Assign(ctx, n, "bad", false))
	}
	waitFor(t, 30*time.Second, "ok-1 converged, bad-1 and bad-2 stuck", func() bool {
		st, err := c.Status(ctx)
		return err == nil && st.Nodes["converged"] == 1 && st.Nodes["stuck"] == 2
	})

	if _, err := (&hqclient.Client{Base: ctl.url}).Metrics(ctx); hqclient.StatusOf(err) != http.StatusUnauthorized {
		t.Fatalf("/metrics without the operator token: %v, want 401", err)
	}
	// Hosts keep reporting between the two reads; the states stay put, so the figures agree.
	page := must[string](t)(c.Metrics(ctx))
	m := scrape(t, page)
	st := must[hq.MeshStatus](t)(c.Status(ctx))
	for _, s := range hq.Statuses {
		if got, want := m[`hq_nodes{status=`+string(s)+`}`], float64(st.Nodes[string(s)]); got != want {
			t.Errorf("hq_nodes{status=%s} = %v, /status says %v", s, got, want)
		}
	}
	scopes := map[string]int{}
	stuckRows := 0
	for _, s := range st.Stuck {
		scopes[s.Scope]++
		stuckRows += len(s.Nodes)
	}
	for _, scope := range []string{hq.ScopeMeshWide, hq.ScopeNodeLocal} {
		if got := m["hq_stuck_resources{scope="+scope+"}"]; got != float64(scopes[scope]) {
			t.Errorf("hq_stuck_resources{scope=%s} = %v, /status lists %d", scope, got, scopes[scope])
		}
	}
	if scopes[hq.ScopeMeshWide] != 1 {
		t.Errorf("/status stuck %+v, want bad/conf once, mesh-wide", st.Stuck)
	}
	counts := map[hq.State]int{}
	for _, n := range []string{"ok-1", "bad-1", "bad-2"} {
		for s, k := range must[hq.NodeView](t)(c.Node(ctx, n)).Counts {
			counts[s] += k
		}
	}
	for _, s := range hq.States {
		if got := m["hq_resources{state="+string(s)+"}"]; got != float64(counts[s]) {
			t.Errorf("hq_resources{state=%s} = %v, the nodes count %d", s, got, counts[s])
		}
	}
	if counts[hq.StateStuck] != stuckRows || counts[hq.StateApplied] != 3 {
		t.Errorf("resources by state %v: want 3 applied and %d stuck", counts, stuckRows)
	}
	if m["hq_reports_received_total"] < 3 || m["hq_report_ingest_seconds"] < m["hq_reports_received_total"] {
		t.Errorf("reports received %v, ingest observations %v: want at least one report per node, each timed",
			m["hq_reports_received_total"], m["hq_report_ingest_seconds"])
	}
	for _, name := range []string{"hq_reports_shed_total", "hq_long_polls_waiting"} {
		if _, ok := m[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	if m["hq_sends{outcome=applied}"] < 3 || m["hq_database_bytes{file=db}"] <= 0 {
		t.Errorf("sends applied %v, database bytes %v", m["hq_sends{outcome=applied}"], m["hq_database_bytes{file=db}"])
	}
	for _, name := range []string{"go_goroutines", "process_start_time_seconds"} {
		if _, ok := m[name]; !ok {
			t.Errorf("no %s: the Go and process collectors are missing", name)
		}
	}

	// hostd's textfile: what its last reconcile did, as node_exporter would read it.
	waitFor(t, 10*time.Second, "hostd's metrics file", func() bool { _, err := os.Stat(prom); return err == nil })
	hm := scrape(t, readFile(prom))
	if hm["hostd_resources{outcome=applied}"] != 1 || hm["hostd_last_success_timestamp_seconds"] == 0 || hm["hostd_reconciles_total"] < 1 {
		t.Errorf("hostd metrics file: %v", hm)
	}
}

// TestMetricsOnTheirOwnListener: with HQ_METRICS_ADDR, /metrics is served there without auth.
func TestMetricsOnTheirOwnListener(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	ctl := startController(t, testdb.New(t), "HQ_METRICS_ADDR="+addr)
	c := hqclient.New(ctl.url, adminToken)
	must[hqclient.Registration](t)(c.Register(context.Background(), "web-1"))
	page := must[string](t)((&hqclient.Client{Base: "http://" + addr}).Metrics(context.Background()))
	if m := scrape(t, page); m["hq_nodes{status=new}"] != 1 {
		t.Fatalf("hq_nodes{status=new} = %v, want 1", m["hq_nodes{status=new}"])
	}
}

// hqCLI runs the hq binary's operator commands against a controller.
// exitStatus is the exit code of a command's error: 0 when there is none.
func exitStatus(err error) int {
	if e, ok := errors.AsType[*exec.ExitError](err); ok {
		return e.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func hqCLI(t *testing.T, url string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "hq"), args...)
	cmd.Env = append(os.Environ(), "HQ_URL="+url, "HQ_ADMIN_TOKEN="+adminToken, "HQ_CA="+suite.ca.file)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestCLIAgainstAController drives a real controller and a real host with the hq CLI alone:
// a module pushed from a file, assigned, held on a host that has the file already, taken,
// applied; status and node say it in the page's words.
func TestCLIAgainstAController(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := hqclient.New(ctl.url, adminToken)
	h := opsHost(t, c, "edge-1", "HOSTD_INTERVAL=300ms")
	os.MkdirAll(filepath.Join(h.root, "etc/proxy"), 0o755)
	os.WriteFile(filepath.Join(h.root, "etc/proxy/ca.pem"), []byte("found\n"), 0o644)
	mod := filepath.Join(t.TempDir(), "route-proxy.json")
	os.WriteFile(mod, []byte(`{"resources":[{"name":"ca","kind":"file","path":"/etc/proxy/ca.pem","content":"declared\n"}]}`), 0o644)
	run := func(args ...string) string {
		t.Helper()
		out, err := hqCLI(t, ctl.url, args...)
		if err != nil {
			t.Fatalf("hq %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	if out := run("module", "push", "route-proxy", mod); out != "route-proxy: revision 1\n" {
		t.Fatalf("module push: %q", out)
	}
	if out := run("assign", "edge-1", "route-proxy"); out != "edge-1: route-proxy assigned, generation 1\n" {
		t.Fatalf("assign: %q", out)
	}
	waitFor(t, 20*time.Second, "edge-1 waiting on take", func() bool {
		return strings.Contains(run("status"), "edge-1: waiting on take: route-proxy (1 held)")
	})
	if out := run("status"); !strings.HasPrefix(out, "1 node(s): 1 waiting-on-take\n") {
		t.Fatalf("status: %q", out)
	}
	out := run("node", "edge-1")
	for _, want := range []string{"edge-1: waiting-on-take\n", "  waiting on take: route-proxy (1 held)\n",
		"applied 0 resource(s), 1 held for untaken modules (route-proxy: 1)", "route-proxy/ca held: would overwrite"} {
		if !strings.Contains(out, want) {
			t.Errorf("node: no %q in\n%s", want, out)
		}
	}
	if out := run("nodes", "--status", "waiting-on-take"); !strings.Contains(out, "edge-1  waiting-on-take  1") {
		t.Errorf("nodes --status waiting-on-take:\n%s", out)
	}
	if out := run("nodes", "--status", "converged"); !strings.HasPrefix(out, "NODE") || strings.Contains(out, "edge-1  ") {
		t.Errorf("nodes --status converged lists edge-1:\n%s", out)
	}
	if out := run("take", "edge-1", "route-proxy"); out != "edge-1: route-proxy taken, generation 2\n" {
		t.Fatalf("take: %q", out)
	}
	waitFor(t, 20*time.Second, "edge-1 converged", func() bool {
		return strings.HasPrefix(run("node", "edge-1"), "edge-1: converged\n")
	})
	if got := readFile(filepath.Join(h.root, "etc/proxy/ca.pem")); got != "declared\n" {
		t.Fatalf("ca.pem after take: %q", got)
	}
	var view hq.NodeView
	if err := jsonOf(run("node", "edge-1", "-o", "json"), &view); err != nil || view.Status != hq.StatusConverged || view.Generation != 2 {
		t.Fatalf("node -o json: %+v %v", view, err)
	}
	// A refused call exits non-zero and says what the controller said.
	out, err := hqCLI(t, ctl.url, "retry", "edge-1", "route-proxy/ca")
	if err == nil || !strings.Contains(out, "409 conflict: route-proxy/ca on node edge-1 is applied") {
		t.Fatalf("retry of an applied resource: %v %q, want exit 1 and the 409", err, out)
	}
	broken := filepath.Join(t.TempDir(), "broken.json")
	os.WriteFile(broken, []byte(`[{"name":"conf","kind":"file","path":"/etc/broken.conf","content":"x\n","validate":["/bin/false"]}]`), 0o644)
	run("module", "push", "broken", broken)
	run("assign", "edge-1", "broken")
	// A plan of another content for the module: what would change, on which node, and nothing changes.
	os.WriteFile(mod, []byte(`{"resources":[{"name":"ca","kind":"file","path":"/etc/proxy/ca.pem","content":"rotated\n"}]}`), 0o644)
	// It exits 2, as terraform plan -detailed-exitcode does when something would change.
	out, err = hqCLI(t, ctl.url, "module", "plan", "route-proxy", mod)
	if want := "route-proxy: would make revision 2: 1 changed (ca)\nwould move 1 node(s) at once: edge-1 (generation 3 → 4)\n"; out != want || exitStatus(err) != 2 {
		t.Fatalf("module plan: exit %d\n%s\nwant 2 and\n%s", exitStatus(err), out, want)
	}
	v := must[hq.NodeView](t)(c.Node(context.Background(), "edge-1"))
	for _, a := range v.Assignments {
		if a.Module == "route-proxy" && (a.Revision != 1 || v.Generation != 3) {
			t.Fatalf("after a plan edge-1 is at generation %d, route-proxy revision %d; want 3 and 1, as before", v.Generation, a.Revision)
		}
	}
	waitFor(t, 20*time.Second, "broken/conf failed", func() bool {
		return strings.Contains(run("node", "edge-1"), "\nbroken/conf failed: ")
	})
	if out := run("retry", "edge-1", "broken/conf"); out != "edge-1: retrying broken/conf\n" {
		t.Fatalf("retry: %q", out)
	}
}

func jsonOf(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// The fleet's verbs through the CLI: label nodes, place a module on a selector, read the
// rollouts of its next revision.
func TestCLIPlacesAndRollsOut(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	c.putModule("app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "1\n"})
	for _, n := range []string{"web-1", "web-2", "db-1"} {
		c.register(n)
	}
	for _, args := range [][]string{{"label", "web-1", "role=web"}, {"label", "web-2", "role=web"}, {"label", "db-1", "role=db"}} {
		if out, err := hqCLI(t, ctl.url, args...); err != nil {
			t.Fatalf("hq %v: %v\n%s", args, err, out)
		}
	}
	out, err := hqCLI(t, ctl.url, "place", "web", "app", "role=web", "--rollout", `{"canary":1,"max_unavailable":1}`)
	if err != nil || !strings.Contains(out, "2 node(s) matched, 2 assigned") {
		t.Fatalf("hq place: %v\n%s", err, out)
	}
	if v := c.node("db-1"); len(v.Assignments) != 0 {
		t.Fatalf("db-1 got %+v", v.Assignments)
	}
	c.putModule("app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "2\n"})
	out, err = hqCLI(t, ctl.url, "rollout", "list")
	if err != nil || !strings.Contains(out, "rollout app r1→r2: 0 of 2 node(s) done") {
		t.Fatalf("hq rollout list: %v\n%s", err, out)
	}
	id := strings.Fields(out)[0]
	if out, err = hqCLI(t, ctl.url, "rollout", "abort", id); err != nil || !strings.Contains(out, "aborted") {
		t.Fatalf("hq rollout abort %s: %v\n%s", id, err, out)
	}
	if out, err = hqCLI(t, ctl.url, "rollout", "resume", id); err == nil {
		t.Fatalf("resuming an aborted rollout succeeded:\n%s", out)
	}
}
