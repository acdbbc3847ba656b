package hostd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// applyBed is a root, a state dir and a file for hostd apply.
type applyBed struct {
	t                 *testing.T
	root, state, file string
}

func newApplyBed(t *testing.T) *applyBed {
	dir := t.TempDir()
	return &applyBed{t: t, root: t.TempDir(), state: t.TempDir(), file: filepath.Join(dir, "web.json")}
}

// write makes the file hold v as JSON.
func (a *applyBed) write(v any) {
	a.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		a.t.Fatal(err)
	}
	if err := os.WriteFile(a.file, b, 0o600); err != nil {
		a.t.Fatal(err)
	}
}

func (a *applyBed) module(rs ...hq.Resource) { a.write(map[string]any{"resources": rs}) }

func (a *applyBed) apply(take bool) Applied {
	a.t.Helper()
	out, err := Apply(context.Background(), ApplyConfig{Root: a.root, StateDir: a.state, File: a.file, Take: take})
	if err != nil {
		a.t.Fatal(err)
	}
	if len(out.Results) == 0 {
		a.t.Fatal("no results")
	}
	return out
}

func (a *applyBed) read(p string) string {
	a.t.Helper()
	b, err := os.ReadFile(filepath.Join(a.root, p))
	if err != nil {
		a.t.Fatal(err)
	}
	return string(b)
}

func TestApplyExitCodes(t *testing.T) {
	a := newApplyBed(t)
	a.module(file("a", "/etc/web/a.conf", "v1\n"), file("b", "/etc/web/b.conf", "v1\n"))
	for _, step := range []struct {
		what string
		edit func()
		code int
		line string
	}{
		{"first apply", func() {}, 2, "applied 2 resource(s)"},
		{"nothing to do", func() {}, 0, "applied 2 resource(s)"},
		{"a change", func() { a.module(file("a", "/etc/web/a.conf", "v2\n"), file("b", "/etc/web/b.conf", "v1\n")) }, 2, "applied 2 resource(s)"},
		{"a failing validate", func() {
			a.module(hq.Resource{Name: "a", Kind: hq.KindFile, Path: "/etc/web/a.conf", Content: "v3\n", Validate: []string{"false"}}, file("b", "/etc/web/b.conf", "v1\n"))
		}, 4, "applied 1 resource(s), 1 failed"},
		{"a failure and a change", func() {
			a.module(hq.Resource{Name: "a", Kind: hq.KindFile, Path: "/etc/web/a.conf", Content: "v3\n", Validate: []string{"false"}}, file("b", "/etc/web/b.conf", "v2\n"))
		}, 6, "applied 1 resource(s), 1 failed"},
		{"failed again, nothing else", func() {}, 4, "applied 1 resource(s), 1 failed"},
		{"a removal is a change", func() { a.module(file("b", "/etc/web/b.conf", "v2\n")) }, 2, "applied 1 resource(s)"},
	} {
		step.edit()
		out := a.apply(false)
		if out.ExitCode() != step.code || out.Line != step.line {
			t.Fatalf("%s: exit %d, line %q; want %d, %q (results %+v)", step.what, out.ExitCode(), out.Line, step.code, step.line, out.Results)
		}
	}
	if got := a.read("/etc/web/b.conf"); got != "v2\n" {
		t.Fatalf("b.conf %q", got)
	}
	_, err := os.Lstat(filepath.Join(a.root, "etc/web/a.conf"))
	if err == nil {
		t.Fatal("the resource the file no longer declares was not removed")
	}
}

func TestApplyAttemptsWhatFailedWithoutBackoff(t *testing.T) {
	a := newApplyBed(t)
	a.module(hq.Resource{Name: "a", Kind: hq.KindFile, Path: "/etc/a", Content: "x", Validate: []string{"false"}})
	for i := range 3 {
		out := a.apply(false)
		if r := out.Results[0]; r.Outcome != hq.StateFailed || !r.Attempted {
			t.Fatalf("apply %d: %+v, want a failed attempt", i, r)
		}
	}
	if _, err := os.Stat(filepath.Join(a.state, backoffFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("apply kept back-off state: %v", err)
	}
}

func TestApplyHoldsWhatItFindsUnlessTaken(t *testing.T) {
	a := newApplyBed(t)
	if err := os.MkdirAll(filepath.Join(a.root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.root, "etc/found.conf"), []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.module(file("found", "/etc/found.conf", "ours"))
	out := a.apply(false)
	if r := out.Results[0]; r.Outcome != hq.StateHeld || out.ExitCode() != 0 || out.Line != "applied 0 resource(s), 1 held for untaken modules (web: 1)" {
		t.Fatalf("%+v, exit %d, line %q", r, out.ExitCode(), out.Line)
	}
	if out := a.apply(true); out.ExitCode() != 2 || a.read("/etc/found.conf") != "ours" {
		t.Fatalf("taken: exit %d, content %q", out.ExitCode(), a.read("/etc/found.conf"))
	}
}

// TestApplyBesideTheDaemon checks that apply and the daemon share the ledger without one
// poisoning the other: apply moves no fence and leaves the controller's modules alone, and
// the daemon's next reconcile removes what apply made that the controller does not declare.
func TestApplyBesideTheDaemon(t *testing.T) {
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	stop := runHostd(t, cfg, &logBuffer{})
	d := f.send(5, nil, mod("ctl", false, file("conf", "/etc/ctl.conf", "ctl")))
	f.waitReport("generation 5 applied", func(r hq.Report) bool { return r.Generation == 5 && len(r.Results) == 1 })

	a := &applyBed{t: t, root: cfg.Root, state: cfg.StateDir, file: filepath.Join(t.TempDir(), "local.json")}
	a.module(file("conf", "/etc/local.conf", "local"))
	_, err := Apply(context.Background(), ApplyConfig{Root: a.root, StateDir: a.state, File: a.file})
	if !errors.Is(err, ErrStateDirInUse) || !strings.Contains(err.Error(), "hostd pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("apply beside a running hostd: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	if out := a.apply(false); out.ExitCode() != 2 {
		t.Fatalf("exit %d: %+v", out.ExitCode(), out.Results)
	}
	l, err := loadLedger(a.state)
	if err != nil {
		t.Fatal(err)
	}
	if l.Generation != 5 || l.Digest != d.Digest || l.Resources["ctl/conf"] == nil || l.Resources["local/conf"] == nil {
		t.Fatalf("ledger after apply: generation %d digest %s, resources %v", l.Generation, l.Digest, l.Resources)
	}
	if a.read("/etc/ctl.conf") != "ctl" || a.read("/etc/local.conf") != "local" {
		t.Fatal("files after apply")
	}

	// The daemon starts again on the declaration it kept: generation 5 still passes its fence,
	// and what only apply declared goes.
	stop = runHostd(t, cfg, &logBuffer{})
	f.waitReport("generation 5 after the restart", func(r hq.Report) bool { return r.Generation == 5 })
	waitFor(t, 5*time.Second, "local.conf removed by the daemon", func() bool {
		_, err := os.Lstat(filepath.Join(a.root, "etc/local.conf"))
		return errors.Is(err, os.ErrNotExist)
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRunRefusesAStateDirInUse(t *testing.T) {
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	lock, err := lockStateDir(cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.release()
	err = Run(context.Background(), cfg, nil)
	if !errors.Is(err, ErrStateDirInUse) || !strings.Contains(err.Error(), "hostd pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("Run on a locked state dir: %v", err)
	}
	lock.release()
	// Released, it is free again.
	lock, err = lockStateDir(cfg.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	lock.release()
}

func TestLoadApplyFile(t *testing.T) {
	dir := t.TempDir()
	load := func(name, body, module string, take bool) (*hq.Declaration, error) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return LoadApplyFile(p, module, take)
	}
	d, err := load("web.json", `{"resources":[{"name":"a","kind":"file","path":"/a","content":"x"}]}`, "", true)
	if err != nil || len(d.Modules) != 1 || d.Modules[0].Name != "web" || !d.Modules[0].Taken || len(d.Modules[0].Resources) != 1 {
		t.Fatalf("module file: %+v, %v", d, err)
	}
	d, err = load("web.json", `{"resources":[]}`, "site", false)
	if err != nil || d.Modules[0].Name != "site" || d.Modules[0].Taken {
		t.Fatalf("named module: %+v, %v", d, err)
	}
	d, err = load("decl.json", `{"node":"web-1","generation":7,"digest":"sha256:x","modules":[{"name":"a","taken":true,"resources":[]},{"name":"b","resources":[{"name":"d","kind":"directory","path":"/srv"}]}]}`, "", false)
	if err != nil || len(d.Modules) != 2 || !d.Modules[0].Taken || d.Modules[1].Resources[0].Path != "/srv" {
		t.Fatalf("declaration: %+v, %v", d, err)
	}
	for _, tc := range []struct{ name, body, module, want string }{
		{"x.json", `{"resources":[],"modules":[]}`, "", "both"},
		{"x.json", `{}`, "", "neither"},
		{"x.json", `{"resources":[],"extra":1}`, "", `unknown object member name "extra"`},
		{"x.json", `{"resources":[]} {}`, "", "after top-level value"},
		{"x.json", `{"resources":[],"generation":3}`, "", "only resources"},
		{"-x.json", `{"resources":[]}`, "", "--module"},
		{"x.json", `{"resources":[]}`, "a/b", "invalid module name"},
		{"x.json", `{"modules":[]}`, "m", "for a module file"},
		{"x.json", `{"resources":[{"name":"a","kind":"file","path":"rel"}]}`, "", "module x: resources[0].path"},
		{"x.json", `{"modules":[{"name":"a","resources":[]},{"name":"a","resources":[]}]}`, "", "declared twice"},
		{"x.json", `{"modules":[{"name":"a","resources":[{"name":"f","kind":"file","path":"/etc/f"}]},{"name":"b","resources":[{"name":"g","kind":"absent","path":"/etc"}]}]}`, "", "b/g"},
	} {
		if _, err := load(tc.name, tc.body, tc.module, false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want an error saying %q", tc.name, tc.body, err, tc.want)
		}
	}
}

func TestApplyWritesNoStateItDoesNotChange(t *testing.T) {
	a := newApplyBed(t)
	a.module(file("a", "/etc/a", "x"))
	a.apply(false)
	ledger := filepath.Join(a.state, ledgerFile)
	before, err := os.Stat(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if out := a.apply(false); out.ExitCode() != 0 {
		t.Fatalf("exit %d", out.ExitCode())
	}
	// A no-op writes nothing: no services record when there are no services, the same ledger.
	if _, err := os.Stat(filepath.Join(a.state, servicesFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("services.json written with no service: %v", err)
	}
	after, err := os.Stat(ledger)
	if err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("the ledger was rewritten by a no-op: %v", err)
	}
}
