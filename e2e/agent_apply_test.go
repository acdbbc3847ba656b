package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// applyBed is a root, a state dir and a module file for hostd apply.
type applyBed struct {
	t                 *testing.T
	root, state, file string
}

func newApplyBed(t *testing.T) *applyBed {
	dir := t.TempDir()
	return &applyBed{t: t, root: filepath.Join(dir, "root"), state: filepath.Join(dir, "state"), file: filepath.Join(dir, "web.json")}
}

func (a *applyBed) env() []string {
	return []string{"HOSTD_ROOT=" + a.root, "HOSTD_STATE_DIR=" + a.state}
}

func (a *applyBed) module(rs ...hq.Resource) {
	a.t.Helper()
	b, err := json.Marshal(map[string]any{"resources": rs})
	if err != nil {
		a.t.Fatal(err)
	}
	if err := os.WriteFile(a.file, b, 0o600); err != nil {
		a.t.Fatal(err)
	}
}

// apply runs hostd apply on the module file to its end and returns its exit code and output.
func (a *applyBed) apply() (int, string, string) {
	a.t.Helper()
	touchSourcesOnce.Do(func() { touchSources("..") })
	cmd := exec.Command(filepath.Join(bin, "hostd"), "apply", a.file)
	cmd.Env = append(os.Environ(), a.env()...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		a.t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// want runs hostd apply and checks its exit code and report line (its last line of output).
func (a *applyBed) want(what string, code int, line string) string {
	a.t.Helper()
	got, out, errOut := a.apply()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if got != code || lines[len(lines)-1] != line {
		a.t.Fatalf("%s: exit %d, stdout %q, stderr %q; want exit %d and the line %q", what, got, out, errOut, code, line)
	}
	return out
}

func confFile(name, content string, validate ...string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindFile, Path: "/etc/web/" + name + ".conf", Content: content, Validate: validate}
}

func TestAgentApplyModuleFile(t *testing.T) {
	a := newApplyBed(t)
	a.module(confFile("a", "v1\n"), confFile("b", "v1\n"), hq.Resource{Name: "logs", Kind: hq.KindDirectory, Path: "/var/log/web"})
	out := a.want("the first apply", 2, "applied 3 resource(s)")
	if !strings.Contains(out, "changed web/a\n") || !strings.Contains(out, "changed web/logs\n") {
		t.Fatalf("output %q", out)
	}
	for _, p := range []string{"etc/web/a.conf", "etc/web/b.conf"} {
		if got := readFile(filepath.Join(a.root, p)); got != "v1\n" {
			t.Fatalf("%s holds %q", p, got)
		}
	}
	if fi, err := os.Stat(filepath.Join(a.root, "var/log/web")); err != nil || !fi.IsDir() {
		t.Fatalf("directory: %v", err)
	}

	if out := a.want("a second apply", 0, "applied 3 resource(s)"); strings.Contains(out, "changed") {
		t.Fatalf("a second apply changed something: %q", out)
	}

	a.module(confFile("a", "v2\n"), confFile("b", "v1\n"), hq.Resource{Name: "logs", Kind: hq.KindDirectory, Path: "/var/log/web"})
	if out := a.want("a change", 2, "applied 3 resource(s)"); out != "changed web/a\napplied 3 resource(s)\n" {
		t.Fatalf("output %q", out)
	}
	if got := readFile(filepath.Join(a.root, "etc/web/a.conf")); got != "v2\n" {
		t.Fatalf("a.conf holds %q", got)
	}

	a.module(confFile("a", "v3\n", "/bin/sh", "-c", "echo 'bad directive' >&2; exit 1"), confFile("b", "v1\n"), hq.Resource{Name: "logs", Kind: hq.KindDirectory, Path: "/var/log/web"})
	if out := a.want("a failing validate", 4, "applied 2 resource(s), 1 failed"); !strings.Contains(out, "failed web/a: validate: exit status 1: bad directive\n") {
		t.Fatalf("output %q", out)
	}
	if got := readFile(filepath.Join(a.root, "etc/web/a.conf")); got != "v2\n" {
		t.Fatalf("a failed validate replaced a.conf with %q", got)
	}

	// What the file no longer declares is removed, and that is a change.
	a.module(confFile("b", "v2\n"))
	if out := a.want("a removal", 2, "applied 1 resource(s)"); !strings.Contains(out, "removed web/a (no longer declared)\n") {
		t.Fatalf("output %q", out)
	}
	if _, err := os.Lstat(filepath.Join(a.root, "etc/web/a.conf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a.conf: %v", err)
	}

	a.module(hq.Resource{Name: "x", Kind: "nope"})
	if code, _, errOut := a.apply(); code != 1 || !strings.Contains(errOut, `unknown kind "nope"`) {
		t.Fatalf("an invalid file: exit %d, stderr %q", code, errOut)
	}
}

func TestAgentApplyRefusedBesideARunningHostd(t *testing.T) {
	a := newApplyBed(t)
	a.module(confFile("a", "v1\n"))
	// A hostd run that cannot reach its controller keeps trying to learn the key, holding the
	// state dir all the while.
	run := start(t, "hostd run", append(a.env(), "HOSTD_CONTROLLER=http://127.0.0.1:"+strconv.Itoa(freePort(t)),
		"HOSTD_NODE=web-1", "HOSTD_TOKEN=tok", "HOSTD_LEARN_KEY=1"), "hostd", "run")
	waitFor(t, 10*time.Second, "hostd run to lock the state dir", func() bool {
		b, err := os.ReadFile(filepath.Join(a.state, "lock"))
		return err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(run.cmd.Process.Pid)
	})
	code, _, errOut := a.apply()
	if code != 1 || !strings.Contains(errOut, "hostd pid "+strconv.Itoa(run.cmd.Process.Pid)) {
		t.Fatalf("apply beside hostd run: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(a.root, "etc/web/a.conf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("apply changed the machine beside a running hostd")
	}
	run.stop()
	a.want("apply once hostd run stopped", 2, "applied 1 resource(s)")
}
