package e2e

import (
	"html"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq/internal/testdb"
)

// versionOf is what a binary of the suite says with --version, less its name.
func versionOf(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(bin, name), "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", name, err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), name+" ")
	if !ok || v == "" {
		t.Fatalf("%s --version printed %q", name, out)
	}
	return v
}

// The node's page and API answer name the build of its hostd, as hostd --version does: both
// come from what Go recorded in the binary ("devel" when the build recorded no commit).
func TestNodeShowsItsHostdBuild(t *testing.T) {
	want := versionOf(t, "hostd")
	if hq := versionOf(t, "hq"); hq != want {
		t.Errorf("hq --version says %q, hostd --version %q: one build, one version", hq, want)
	}
	// Built from a git checkout (as the suite always is in CI), the version names its commit.
	if commit, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
		if c := strings.TrimSpace(string(commit)); len(c) < 12 || !strings.Contains(want, c[:12]) {
			t.Errorf("hostd --version says %q, which does not name the commit %s it was built from", want, c)
		}
	}
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	newHost(t, c, ctl.url, "web-1")
	waitFor(t, 20*time.Second, "hostd said its build", func() bool { return c.node("web-1").Host != nil })
	if got := c.node("web-1").Host.HostdVersion; got != want {
		t.Fatalf("the API says hostd %q, hostd --version %q", got, want)
	}
	_, page := getPage(t, ctl.url+"/nodes/web-1")
	if !strings.Contains(html.UnescapeString(page), `<dd id="hostd-version" class="mono">`+want+`</dd>`) {
		t.Fatalf("the node page does not show hostd %q", want)
	}
}

// hq NAME -h of the binary prints that command's help alone.
func TestCommandHelpOfTheBinary(t *testing.T) {
	for _, name := range []string{"serve", "demo", "migrate"} {
		out, err := exec.Command(filepath.Join(bin, "hq"), name, "-h").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "usage: hq "+name+"\n") || strings.Contains(string(out), "operator commands") {
			t.Errorf("hq %s -h (%v):\n%s", name, err, out)
		}
	}
	out, err := exec.Command(filepath.Join(bin, "hq"), "-h").CombinedOutput()
	for _, k := range []string{"HQ_URL", "HQ_CA", "HQ_ADMIN_TOKEN", "HQ_ADDR", "HQ_DB"} {
		if err != nil || !strings.Contains(string(out), "  "+k+" ") {
			t.Errorf("hq -h (%v) does not list %s", err, k)
		}
	}
}
