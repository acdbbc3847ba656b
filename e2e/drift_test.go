package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// drifts reads a node's drift history, newest first.
func (c *client) drifts(node string) []hq.DriftView {
	c.t.Helper()
	var out struct{ Drifts []hq.DriftView }
	c.call("GET", "/nodes/"+node+"/drifts?limit=1000", nil, &out)
	return out.Drifts
}

// driftOf waits for a drifts row of module/resource after the first n rows, and returns it.
func driftOf(t *testing.T, c *client, node, ref string, after int) hq.DriftView {
	t.Helper()
	var found hq.DriftView
	waitFor(t, 20*time.Second, "a drift of "+ref, func() bool {
		ds := c.drifts(node)
		for _, d := range ds[:max(0, len(ds)-after)] {
			if hq.Ref(d.Module, d.Resource) == ref {
				found = d
				return true
			}
		}
		return false
	})
	return found
}

// Changes made behind hostd's back — a file, a directory's mode, a link's target, a service
// stopped — are put back, named in the report line, kept with what differed, and shown; a
// file that keeps being changed gives its node, and the mesh, a drift line.
func TestDriftIsSeenCountedAndKept(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	h := newHost(t, c, ctl.url, "web-1")
	c.putModule("app", appModule("A1")...)
	c.assign("web-1", "app", false)
	waitFor(t, 20*time.Second, "web-1 converged", func() bool {
		return c.node("web-1").Status == hq.StatusConverged && serving(h) != ""
	})
	root := h.root
	cases := []struct {
		ref    string
		change func()
		detail string
	}{
		{"app/a", func() { os.WriteFile(filepath.Join(root, "etc/app/a.conf"), []byte("tampered\n"), 0o640) }, "content sha256:"},
		{"app/dir", func() { os.Chmod(filepath.Join(root, "etc/app"), 0o777) }, "mode 0777 (want 0750)"},
		{"app/current", func() {
			p := filepath.Join(root, "etc/app/current")
			os.Remove(p)
			os.Symlink("/etc/app/b.conf", p)
		}, "target"},
		{"app/server", func() {
			addr, _ := os.ReadFile(filepath.Join(root, "var/app/server.addr"))
			stopServer(t, string(addr))
		}, "not running"},
	}
	seen := 0
	for _, cs := range cases {
		cs.change()
		d := driftOf(t, c, "web-1", cs.ref, seen)
		seen = len(c.drifts("web-1"))
		if !strings.Contains(d.Detail, cs.detail) || d.ReportID == nil {
			t.Errorf("%s: drift detail %q, want it to say %q", cs.ref, d.Detail, cs.detail)
		}
		// The report that said so names it right after the applied count, on both sides.
		var reps struct{ Reports []hq.ReportView }
		c.call("GET", "/nodes/web-1/reports?limit=50", nil, &reps)
		var line string
		for _, r := range reps.Reports {
			if r.ID == *d.ReportID {
				line = r.Summary
			}
		}
		if !strings.Contains(line, "drift put back: "+cs.ref) {
			t.Errorf("%s: report line %q does not name it", cs.ref, line)
		}
		if !strings.Contains(h.out.String(), "drift put back: "+cs.ref) {
			t.Errorf("%s: hostd's log does not name it", cs.ref)
		}
	}
	waitFor(t, 20*time.Second, "everything put back", func() bool {
		return readFile(filepath.Join(root, "etc/app/a.conf")) == "A1\n" && serving(h) != "" && c.node("web-1").Status == hq.StatusConverged
	})
	// The node page shows the history.
	code, page := getPage(t, ctl.url+"/nodes/web-1")
	if code != http.StatusOK || !strings.Contains(page, "app/a") || !strings.Contains(page, "mode 0777 (want 0750)") {
		t.Fatalf("node page %d lacks the drifts", code)
	}
	// A small text file changed by hand shows as a diff of what was declared and what was found.
	page = strings.ReplaceAll(page, "&#43;", "+")
	for _, want := range []string{"--- app/a as declared", "+++ app/a as found", "-A1", "+tampered"} {
		if !strings.Contains(page, want) {
			t.Errorf("node page lacks %q of the drift of app/a", want)
		}
	}

	// The same file changed five times in a minute: the node and the mesh say it.
	for i := range 5 {
		os.WriteFile(filepath.Join(root, "etc/app/b.conf"), []byte(fmt.Sprintf("again %d\n", i)), 0o644)
		driftOf(t, c, "web-1", "app/b", seen)
		seen = len(c.drifts("web-1"))
	}
	line := "drift: app/b put back 5 time(s) in the last hour"
	if lines := strings.Join(c.node("web-1").Lines, "\n"); !strings.Contains(lines, line) {
		t.Fatalf("node lines %q lack %q", lines, line)
	}
	if lines := strings.Join(c.status().Lines, "\n"); !strings.Contains(lines, "drift: app/b put back 5 time(s) on 1 node(s)") {
		t.Fatalf("/status lines %q lack the drift of app/b", lines)
	}
}

// stopServer kills the pair server listening at addr, as someone stopping it by hand would.
func stopServer(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/pid")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
			return
		}
	}
	t.Fatalf("cannot find the pair server's pid at %s: %v", addr, err)
}

// getPage reads a status page with the operator token.
func getPage(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.SetBasicAuth("x", adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
