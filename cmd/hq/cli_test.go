package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/certs"
	"github.com/meshhq/hq/client"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/teststore"
)

// cliEnv runs operator commands against an API on a fresh database.
type cliEnv struct {
	t   *testing.T
	url string
	// env is more of the environment the commands see.
	env map[string]string
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	srv := httptest.NewServer(newAPI(t))
	t.Cleanup(srv.Close)
	return &cliEnv{t: t, url: srv.URL}
}

// newAPI is the API on a fresh database.
func newAPI(t *testing.T) http.Handler {
	t.Helper()
	store := teststore.Open(t, db.Options{})
	s := &api.Server{Store: store, AdminToken: "admin", Instance: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxWait: time.Second}
	return s.Handler()
}

func (e *cliEnv) run(args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"HQ_URL": e.url, "HQ_ADMIN_TOKEN": "admin"}
	maps.Copy(env, e.env)
	code = runOperator(context.Background(), args[0], args[1:], &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func (e *cliEnv) ok(args ...string) string {
	e.t.Helper()
	code, out, errs := e.run(args...)
	if code != 0 {
		e.t.Fatalf("hq %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func TestCLI(t *testing.T) {
	e := newCLIEnv(t)
	mod := filepath.Join(t.TempDir(), "app.json")
	os.WriteFile(mod, []byte(`{"resources":[{"name":"conf","kind":"file","path":"/etc/app.conf","content":"x"}]}`), 0o644)
	c := e.ok("status")
	if c != "0 node(s)\n" {
		t.Errorf("status of an empty mesh: %q", c)
	}
	if out := e.ok("module", "push", "app", mod); out != "app: revision 1\n" {
		t.Errorf("module push: %q", out)
	}
	if out := e.ok("module", "push", "app", mod); out != "app: revision 1, unchanged\n" {
		t.Errorf("module push again: %q", out)
	}
	code, _, errs := e.run("assign", "web-1", "app")
	if code != 1 || !strings.Contains(errs, "404") {
		t.Errorf("assign to an unknown node: exit %d, %q; want 1 and the 404", code, errs)
	}
	// flags after the positional arguments, as operators type them
	newNode(t, e.url, "web-1")
	if out := e.ok("assign", "web-1", "app", "--taken"); out != "web-1: app assigned, taken, generation 1\n" {
		t.Errorf("assign: %q", out)
	}
	if out := e.ok("take", "web-1", "app"); out != "web-1: app taken, generation 1\n" {
		t.Errorf("take: %q", out)
	}
	out := e.ok("modules")
	if lines := strings.Split(out, "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "MODULE  REVISION  PUSHED") ||
		!strings.HasPrefix(lines[1], "app     1         20") || !strings.HasSuffix(lines[1], "  web-1") || lines[2] != "1 module(s)" {
		t.Errorf("modules:\n%s", out)
	}
	mod2 := filepath.Join(t.TempDir(), "app2.json")
	os.WriteFile(mod2, []byte(`[{"name":"conf","kind":"file","path":"/etc/app.conf","content":"y"},{"name":"more","kind":"directory","path":"/srv/app"}]`), 0o644)
	if code, out, _ := e.run("module", "plan", "app", mod2); code != 2 || out != "app: would make revision 2: 1 added (more), 1 changed (conf)\nwould move 1 node(s) at once: web-1 (generation 1 → 2)\n" {
		t.Errorf("module plan: exit %d (want 2: it would change something)\n%s", code, out)
	}
	if out := e.ok("module", "plan", "app", mod); out != "app: unchanged, revision 1 stays; nothing would move\n" { // exit 0
		t.Errorf("module plan of the same module: %q", out)
	}
	out = e.ok("node", "web-1")
	for _, want := range []string{"web-1: new\n", "  new: never reported\n", "generation 1 (applied 0)\n", "assigned app revision 1 by admin at 20", ", taken by admin\n", "app/conf pending\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("node: no %q in\n%s", want, out)
		}
	}
	out = e.ok("nodes", "--status", "new")
	if !strings.Contains(out, "NODE") || !strings.Contains(out, "web-1  new     1 (applied 0)  -\n") || !strings.HasSuffix(out, "1 node(s): 1 new\n") {
		t.Errorf("nodes:\n%s", out)
	}
	var j struct {
		Nodes []struct{ Name string }
		Total int
	}
	if err := json.Unmarshal([]byte(e.ok("nodes", "-o", "json")), &j); err != nil || j.Total != 1 || j.Nodes[0].Name != "web-1" {
		t.Errorf("nodes -o json: %+v %v", j, err)
	}

	if out := e.ok("unassign", "web-1", "app"); out != "web-1: app unassigned, generation 2\n" {
		t.Errorf("unassign: %q", out)
	}
	if out := e.ok("node", "web-1"); strings.Contains(out, "assigned app") {
		t.Errorf("node after unassign still has app:\n%s", out)
	}
	var m struct{ Modules []hq.ModuleView }
	if err := json.Unmarshal([]byte(e.ok("modules", "-o", "json")), &m); err != nil || len(m.Modules) != 1 || m.Modules[0].Revision != 1 || len(m.Modules[0].Nodes) != 0 {
		t.Errorf("modules -o json after unassign: %+v %v", m, err)
	}
	if code, _, errs := e.run("unassign", "web-1", "app"); code != 1 || !strings.Contains(errs, "404") {
		t.Errorf("unassign of a module not assigned: exit %d, %q; want 1 and the 404", code, errs)
	}
	if code, _, _ := e.run("unassign", "web-1"); code != 2 {
		t.Errorf("unassign without a module: exit %d, want 2", code)
	}
}

func TestCLIUsage(t *testing.T) {
	e := newCLIEnv(t)
	code, out, errs := e.run("nodes", "-h")
	if code != 0 || out != "" || !strings.Contains(errs, "usage: hq nodes [--status S] [--selector SEL]") || !strings.Contains(errs, "HQ_URL") {
		t.Errorf("nodes -h: exit %d, %q, %q", code, out, errs)
	}
	for _, args := range [][]string{{"node"}, {"retry", "web-1", "conf"}, {"label", "web-1", "novalue"}, {"status", "-o", "yaml"}, {"module", "pull"}} {
		if code, _, errs := e.run(args...); code != 2 {
			t.Errorf("hq %v: exit %d (%s), want 2", args, code, errs)
		}
	}
}

// Over HTTPS with a private CA the CLI trusts HQ_CA alone: without it, or with another CA,
// the command fails on the certificate; a file that holds no certificate is named.
func TestCLITrustsHQCA(t *testing.T) {
	dir := t.TempDir()
	ca, _ := certs.NewCA("test CA", time.Hour)
	other, _ := certs.NewCA("another CA", time.Hour)
	pair, err := ca.Issue(certs.Spec{Name: "hq", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pair.Cert, pair.Key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(newAPI(t))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile, otherFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "other.pem"), filepath.Join(dir, "hq.key")
	ca.WriteCert(caFile)
	other.WriteCert(otherFile)
	pair.Write(filepath.Join(dir, "hq.pem"), keyFile)

	e := &cliEnv{t: t, url: srv.URL}
	for ca, want := range map[string]string{"": "certificate signed by unknown authority", otherFile: "certificate signed by unknown authority",
		keyFile: "HQ_CA: " + keyFile + " holds no PEM certificate"} {
		e.env = map[string]string{"HQ_CA": ca}
		if code, out, errs := e.run("status"); code != 1 || out != "" || !strings.Contains(errs, want) {
			t.Errorf("HQ_CA=%q: exit %d, %q, %q; want 1 and %q", ca, code, out, errs, want)
		}
	}
	e.env = map[string]string{"HQ_CA": ""}
	if _, _, errs := e.run("status"); !strings.Contains(errs, "set HQ_CA") {
		t.Errorf("an untrusted certificate does not say what to set: %q", errs)
	}
	e.env = map[string]string{"HQ_CA": caFile}
	if out := e.ok("status"); out != "0 node(s)\n" {
		t.Errorf("status over HTTPS: %q", out)
	}
}

func newNode(t *testing.T, url, name string) {
	t.Helper()
	if _, err := clientFor(url).Register(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

func clientFor(url string) *client.Client { return client.New(url, "admin") }

// A module the API refuses is refused with every problem it names, in text and in JSON; a
// plan of it exits 2, as one that would change something does.
func TestCLIPrintsWhatTheAPIRefuses(t *testing.T) {
	e := newCLIEnv(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"resources":[{"name":"web","kind":"container","image":"app:latest"},{"name":"x","kind":"file","path":"relative"}]}`), 0o644)
	code, _, errs := e.run("module", "push", "app", bad)
	for _, want := range []string{"resources[0].image: must be pinned by digest", `resources[1].path: "relative" must be absolute (start with /)`} {
		if code != 1 || !strings.Contains(errs, want) {
			t.Errorf("module push of a bad module: exit %d, no %q in\n%s", code, want, errs)
		}
	}
	code, out, _ := e.run("module", "push", "app", bad, "-o", "json")
	var j struct {
		Error struct {
			Details []struct{ Field, Message string }
		}
	}
	if code != 1 || json.Unmarshal([]byte(out), &j) != nil || len(j.Error.Details) != 2 || j.Error.Details[0].Field != "resources[0].image" {
		t.Errorf("module push -o json of a bad module: exit %d, %s", code, out)
	}
	if code, _, errs := e.run("module", "plan", "app", bad); code != 2 || !strings.Contains(errs, "resources[0].image") {
		t.Errorf("module plan of a bad module: exit %d (want 2), %q", code, errs)
	}
	e.env = map[string]string{"HQ_ADMIN_TOKEN": ""}
	if code, _, errs := e.run("status"); code != 1 || !strings.Contains(errs, "set HQ_TOKEN") || !strings.Contains(errs, "HQ_ADMIN_TOKEN") {
		t.Errorf("without a token: exit %d, %q; want it to name HQ_TOKEN and HQ_ADMIN_TOKEN", code, errs)
	}
}

// Flags may stand before the command as well as after it.
func TestOperatorFlagsBeforeTheCommand(t *testing.T) {
	for _, c := range []struct {
		line []string
		name string
		rest []string
	}{
		{[]string{"-o", "json", "status"}, "status", []string{"-o", "json"}},
		{[]string{"-o=json", "nodes", "--status", "stuck"}, "nodes", []string{"-o=json", "--status", "stuck"}},
		{[]string{"--selector", "role=web", "nodes"}, "nodes", []string{"--selector", "role=web"}},
		{[]string{"node", "web-1", "-o", "json"}, "node", []string{"web-1", "-o", "json"}},
	} {
		name, rest, ok := operatorLine(c.line)
		if !ok || name != c.name || strings.Join(rest, " ") != strings.Join(c.rest, " ") {
			t.Errorf("%v: %q %v %v", c.line, name, rest, ok)
		}
	}
	for _, line := range [][]string{{"serve"}, {"-o", "json"}, {"-h", "status"}, {"-o", "json", "serve"}} {
		if _, _, ok := operatorLine(line); ok {
			t.Errorf("%v taken for an operator command", line)
		}
	}
}

// A rollout's nodes line up, and a node whose wave has not started waits.
func TestRolloutLinesAlign(t *testing.T) {
	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	r := hq.Rollout{ID: 3, Module: "app", Progress: []hq.RolloutNode{
		{Node: "web-1", Wave: 0, State: "done", StartedAt: &at},
		{Node: "web-10000", Wave: 1, State: "failed", Reason: "app/conf failed", StartedAt: &at},
		{Node: "db-2", Wave: 2, State: "pending"},
	}}
	lines := rolloutLines(r)
	want := []string{
		"  web-1      wave 0   done",
		"  web-10000  wave 1   failed: app/conf failed",
		"  db-2       waiting  pending",
	}
	if len(lines) != 4 || strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant\n%s", strings.Join(lines[1:], "\n"), strings.Join(want, "\n"))
	}
}

// Under a placement's rollout policy a plan lists the waves the rollout would run, canaries
// first, instead of every node moving at once.
func TestCLIPlanShowsTheRolloutsWaves(t *testing.T) {
	e := newCLIEnv(t)
	mod := filepath.Join(t.TempDir(), "app.json")
	os.WriteFile(mod, []byte(`[{"name":"conf","kind":"file","path":"/etc/app.conf","content":"x"}]`), 0o644)
	e.ok("module", "push", "app", mod)
	for _, n := range []string{"web-1", "web-2", "web-3", "web-4"} {
		newNode(t, e.url, n)
		if err := clientFor(e.url).SetLabels(context.Background(), n, map[string]string{"role": "web"}); err != nil {
			t.Fatal(err)
		}
	}
	e.ok("place", "web", "app", "role=web", "--rollout", `{"canary":1,"max_unavailable":2}`)
	mod2 := filepath.Join(t.TempDir(), "app2.json")
	os.WriteFile(mod2, []byte(`[{"name":"conf","kind":"file","path":"/etc/app.conf","content":"y"}]`), 0o644)
	code, out, errs := e.run("module", "plan", "app", mod2)
	want := "app: would make revision 2: 1 changed (conf)\n" +
		"would start a rollout of placement web in 3 wave(s):\n" +
		"  wave 1 (canary): web-1\n  wave 2: web-2, web-3\n  wave 3: web-4\n"
	if code != 2 || out != want {
		t.Errorf("module plan: exit %d (want 2)\n%s%s\nwant\n%s", code, out, errs, want)
	}
	// Nothing was started: the plan rolled its writes back.
	if rs, err := clientFor(e.url).Rollouts(context.Background()); err != nil || len(rs) != 0 {
		t.Errorf("rollouts after a plan: %v, %v; want none", rs, err)
	}
}

// hq logs prints the last lines hostd reported for a resource: a failed container's error,
// which ends with what it wrote, and what runs for it.
func TestCLILogs(t *testing.T) {
	ctx := context.Background()
	store := teststore.Open(t, db.Options{})
	s := &api.Server{Store: store, AdminToken: "admin", Instance: "test", Log: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxWait: time.Second}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	e := &cliEnv{t: t, url: srv.URL}
	if _, _, err := store.CreateNode(ctx, "web-1"); err != nil {
		t.Fatal(err)
	}
	img := "localhost/app@sha256:" + strings.Repeat("ab", 32)
	if _, err := store.PutModule(ctx, "app", []hq.Resource{{Name: "web", Kind: hq.KindContainer, Image: img},
		{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Assign(ctx, "web-1", "app", nil, nil); err != nil {
		t.Fatal(err)
	}
	d, err := store.Compose(ctx, "web-1", "test")
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Results: []hq.Result{
		{Module: "app", Resource: "web", Outcome: hq.StateFailed, Attempted: true,
			Error: "the container exited with code 3; it wrote: listening on :80\nout of memory; started again",
			Container: &hq.ContainerStatus{ID: strings.Repeat("4f", 32), ImageDigest: "sha256:" + strings.Repeat("ab", 32),
				StartedAt: started, Restarts: 2, Health: hq.HealthNone, Spec: "sha256:x"}},
		{Module: "app", Resource: "conf", Outcome: hq.StateApplied, Attempted: true},
	}}
	if _, err := store.Ingest(ctx, "web-1", rep, db.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "app/web on web-1: failed; container 4f4f4f4f4f4f, none, 2 restart(s), started 2026-11-30T03:00:00.000Z\n" +
		"the container exited with code 3; it wrote: listening on :80\nout of memory; started again\n"
	if out := e.ok("logs", "web-1", "app/web"); out != want {
		t.Errorf("logs of a failed container:\n%s\nwant\n%s", out, want)
	}
	if out := e.ok("logs", "web-1", "app/conf"); out != "app/conf on web-1: applied\nno error reported: nothing failing to show\n" {
		t.Errorf("logs of an applied file: %q", out)
	}
	var j struct {
		LastError string `json:"last_error"`
		Container *hq.ContainerStatus
	}
	if err := json.Unmarshal([]byte(e.ok("logs", "web-1", "app/web", "-o", "json")), &j); err != nil || j.Container == nil || j.Container.Restarts != 2 || !strings.Contains(j.LastError, "out of memory") {
		t.Errorf("logs -o json: %+v %v", j, err)
	}
	if code, _, errs := e.run("logs", "web-1", "app/nothing"); code != 1 || !strings.Contains(errs, "declares no app/nothing") {
		t.Errorf("logs of a resource not declared: exit %d, %q", code, errs)
	}
	if code, _, _ := e.run("logs", "web-1", "web"); code != 2 {
		t.Errorf("logs without MODULE/RESOURCE: exit %d, want 2", code)
	}
}

// hq nodes --selector prints the totals of the nodes the selector matches, not of the mesh.
func TestCLINodesTotalsFollowTheSelector(t *testing.T) {
	e := newCLIEnv(t)
	for _, n := range []string{"web-1", "web-2", "db-1"} {
		newNode(t, e.url, n)
	}
	e.ok("label", "web-1", "role=web")
	e.ok("label", "web-2", "role=web")
	out := e.ok("nodes", "--selector", "role=web")
	if !strings.Contains(out, "web-1  new") || strings.Contains(out, "db-1") || !strings.HasSuffix(out, "\nrole=web: 2 node(s): 2 new\n") {
		t.Errorf("nodes --selector role=web:\n%s", out)
	}
	if out := e.ok("nodes"); !strings.HasSuffix(out, "\n3 node(s): 3 new\n") {
		t.Errorf("nodes:\n%s", out)
	}
}
