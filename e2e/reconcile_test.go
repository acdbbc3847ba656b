package e2e

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// appModule declares one resource of every kind; the service reads a.conf and b.conf at start
// and restarts when either changes.
func appModule(a string) []hq.Resource {
	return []hq.Resource{
		{Name: "dir", Kind: hq.KindDirectory, Path: "/etc/app", Mode: "0750"},
		{Name: "vardir", Kind: hq.KindDirectory, Path: "/var/app"},
		{Name: "a", Kind: hq.KindFile, Path: "/etc/app/a.conf", Content: a + "\n", Mode: "0640"},
		{Name: "b", Kind: hq.KindFile, Path: "/etc/app/b.conf", Content: "B1\n"},
		{Name: "current", Kind: hq.KindSymlink, Path: "/etc/app/current", Target: "/etc/app/a.conf"},
		{Name: "old", Kind: hq.KindAbsent, Path: "/etc/app/old.conf"},
		{Name: "migrate", Kind: hq.KindAction, Command: []string{"/bin/sh", "-c", "echo ran >> {root}/var/app/migrate.log"}},
		{Name: "server", Kind: hq.KindService, RestartOn: []string{"a", "b"}, Command: []string{
			filepath.Join(bin, "pairserver"), "-a", "{root}/etc/app/a.conf", "-b", "{root}/etc/app/b.conf",
			"-addr-file", "{root}/var/app/server.addr"}},
	}
}

// serving asks the host's pair server what it serves; "" when it does not answer.
func serving(h *host) string {
	addr, err := os.ReadFile(filepath.Join(h.root, "var/app/server.addr"))
	if err != nil {
		return ""
	}
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + string(addr) + "/")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestReconcileEveryKindOnTwoNodes(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	hosts := []*host{newHost(t, c, ctl.url, "n1"), newHost(t, c, ctl.url, "n2")}
	c.putModule("app", appModule("A1")...)
	for _, h := range hosts {
		c.assign(h.node, "app", false)
	}
	for _, h := range hosts {
		waitFor(t, 20*time.Second, h.node+" converged", func() bool { return c.node(h.node).Status == hq.StatusConverged })
		checkApplied(t, h, "A1")
		if v := c.node(h.node); v.LastReport.Summary != "applied 8 resource(s)" {
			t.Fatalf("%s report line %q", h.node, v.LastReport.Summary)
		}
		waitFor(t, 5*time.Second, "report line in hostd's log", func() bool { return strings.Contains(h.out.String(), "applied 8 resource(s)") })
	}

	// A new revision reaches both hosts through the long-poll, well inside the interval.
	c.putModule("app", appModule("A2")...)
	start := time.Now()
	for _, h := range hosts {
		waitFor(t, 2*time.Second-time.Since(start), h.node+" applies the new revision", func() bool {
			return readFile(filepath.Join(h.root, "etc/app/a.conf")) == "A2\n"
		})
	}
	for _, h := range hosts {
		waitFor(t, 10*time.Second, h.node+" serves the new pair", func() bool { return serving(h) == "A2|B1" })
		waitFor(t, 10*time.Second, h.node+" converged again", func() bool { return c.node(h.node).Status == hq.StatusConverged })
		if got := readFile(filepath.Join(h.root, "var/app/migrate.log")); got != "ran\n" {
			t.Fatalf("the action ran more than once for one spec: %q", got)
		}
	}

	// The controller restarts; the hosts carry on and their reports land with the new one.
	addr := ctl.addr
	ctl.stop()
	before := *c.nodeAfterRestart(t, ctl, addr, hosts[0].node)
	waitFor(t, 10*time.Second, "a report after the restart", func() bool {
		return c.node(hosts[0].node).LastReportAt.After(before)
	})

	// Unassign: what hostd made goes, the service stops, the other node is untouched.
	c.unassign("n1", "app")
	// Until n1 reports the generation without app, its reconcile may be halfway through the
	// removals.
	waitFor(t, 10*time.Second, "n1 cleaned up and reporting so", func() bool {
		_, err := os.Stat(filepath.Join(hosts[0].root, "etc/app/a.conf"))
		v := c.node("n1")
		return os.IsNotExist(err) && serving(hosts[0]) == "" && v.AppliedGeneration == v.Generation && len(v.Assignments) == 0
	})
	if _, err := os.Lstat(filepath.Join(hosts[0].root, "etc/app/current")); !os.IsNotExist(err) {
		t.Fatalf("the symlink survived unassign: %v", err)
	}
	if serving(hosts[1]) != "A2|B1" {
		t.Fatal("n2's service stopped when n1's module was unassigned")
	}
	want := []string{"pending", "applied", "pending", "applied", "removed"}
	if got := story(c.transitions("n1"), "app", "a"); !slices.Equal(got, want) {
		t.Fatalf("transitions of app/a on n1: %v, want %v", got, want)
	}
}

// nodeAfterRestart starts a controller on the same database and address and returns the
// node's last report time as the new controller first sees it.
func (c *client) nodeAfterRestart(t *testing.T, old *controller, addr, node string) *time.Time {
	t.Helper()
	restarted := startControllerAt(t, old.db, addr)
	if restarted.url != old.url {
		t.Fatalf("restarted on %s, want %s", restarted.url, old.url)
	}
	return c.node(node).LastReportAt
}

func checkApplied(t *testing.T, h *host, a string) {
	t.Helper()
	root := h.root
	if got := readFile(filepath.Join(root, "etc/app/a.conf")); got != a+"\n" {
		t.Fatalf("%s a.conf = %q", h.node, got)
	}
	for path, mode := range map[string]os.FileMode{"etc/app": 0o750 | os.ModeDir, "etc/app/a.conf": 0o640, "etc/app/b.conf": 0o644} {
		fi, err := os.Stat(filepath.Join(root, path))
		if err != nil || fi.Mode() != mode {
			t.Fatalf("%s %s: mode %v (%v), want %v", h.node, path, fi.Mode(), err, mode)
		}
	}
	if target, err := os.Readlink(filepath.Join(root, "etc/app/current")); err != nil || target != filepath.Join(root, "etc/app/a.conf") {
		t.Fatalf("%s link -> %q (%v)", h.node, target, err)
	}
	waitFor(t, 10*time.Second, h.node+" service serving", func() bool { return serving(h) == a+"|B1" })
}

// A node with nothing assigned reports all the same, and reads converged, not new.
func TestIdleNodeConverges(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	newHost(t, c, ctl.url, "idle")
	waitFor(t, 20*time.Second, "the idle node converged", func() bool {
		v := c.node("idle")
		return v.Status == hq.StatusConverged && v.LastReport != nil && v.LastReport.Summary == "applied 0 resource(s)"
	}) // Its first report said what the host runs: the node page and GET /nodes/{node} show it.
	h := c.node("idle").Host
	if h == nil || h.HostdVersion == "" || h.Arch != runtime.GOARCH || h.OS == "" || h.BootedAt.IsZero() || h.BootedAt.After(time.Now()) {
		t.Fatalf("host facts %+v: want hostd's version, %s, an OS and a boot time in the past", h, runtime.GOARCH)
	}
}
