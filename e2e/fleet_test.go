package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// registerLabelled registers a node with labels and returns its token.
func (c *client) registerLabelled(node string, labels map[string]string) string {
	c.t.Helper()
	var out struct{ Token string }
	c.call("POST", "/nodes", map[string]any{"name": node, "labels": labels}, &out)
	return out.Token
}

// labelledHost registers a node with labels and starts its hostd.
func labelledHost(t *testing.T, c *client, ctl, node string, labels map[string]string, env ...string) *host {
	t.Helper()
	token := c.registerLabelled(node, labels)
	dir := t.TempDir()
	root, state := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	os.MkdirAll(root, 0o755)
	return startHost(t, ctl, node, token, root, state, env...)
}

// converged says whether a node has applied its current generation with nothing left to do.
func converged(c *client, node string) bool {
	v := c.node(node)
	return v.Status == hq.StatusConverged && v.AppliedGeneration == v.Generation
}

func hasModule(v hq.NodeView, module string) bool {
	for _, a := range v.Assignments {
		if a.Module == module {
			return true
		}
	}
	return false
}

// A placement reaches exactly the nodes its selector matches, and follows them: a node
// relabelled out of it loses the module (and its file leaves the machine), a node registered
// into it gains the module.
func TestPlacementFollowsLabelsOnRealHosts(t *testing.T) {
	ctl := startController(t, filepath.Join(t.TempDir(), "hq.db"), "HQ_STUCK_ATTEMPTS=3")
	c := newClient(t, ctl.url)
	c.putModule("app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "v1\n"})
	hosts := map[string]*host{}
	for i := 1; i <= 6; i++ {
		labels := map[string]string{"role": "web"}
		if i <= 2 {
			labels["region"] = "eu"
		}
		n := fmt.Sprintf("web-%d", i)
		hosts[n] = labelledHost(t, c, ctl.url, n, labels)
	}
	hosts["db-1"] = labelledHost(t, c, ctl.url, "db-1", map[string]string{"role": "db"})

	var p hq.Placement
	c.call("PUT", "/placements/web-app", map[string]any{"module": "app", "selector": "role=web"}, &p)
	if p.Matched != 6 || p.Assigned != 6 {
		t.Fatalf("placement %+v, want 6 matched and assigned", p)
	}
	waitFor(t, 30*time.Second, "app on the six web nodes", func() bool {
		for n := range hosts {
			if !converged(c, n) {
				return false
			}
		}
		return true
	})
	for n, h := range hosts {
		got := readFile(filepath.Join(h.root, "etc/app.conf"))
		if want := n != "db-1"; (got == "v1\n") != want || hasModule(c.node(n), "app") != want {
			t.Fatalf("%s: app.conf %q, assigned %v", n, got, hasModule(c.node(n), "app"))
		}
	}
	var eu struct{ Nodes []hq.NodeView }
	c.call("GET", "/nodes?selector=role%3Dweb,region%3Deu", nil, &eu)
	if len(eu.Nodes) != 2 {
		t.Fatalf("role=web,region=eu lists %d node(s)", len(eu.Nodes))
	}

	// web-6 becomes a database: app leaves it, and hostd removes the file it managed.
	c.call("PUT", "/nodes/web-6/labels", map[string]any{"labels": map[string]string{"role": "db"}}, nil)
	waitFor(t, 30*time.Second, "app gone from web-6", func() bool {
		return converged(c, "web-6") && !hasModule(c.node("web-6"), "app") &&
			readFile(filepath.Join(hosts["web-6"].root, "etc/app.conf")) != "v1\n"
	})
	// A new web node gains it.
	hosts["web-7"] = labelledHost(t, c, ctl.url, "web-7", map[string]string{"role": "web"})
	waitFor(t, 30*time.Second, "app on web-7", func() bool {
		return converged(c, "web-7") && readFile(filepath.Join(hosts["web-7"].root, "etc/app.conf")) == "v1\n"
	})
	c.call("GET", "/placements/web-app", nil, &p)
	if p.Matched != 6 || p.Assigned != 6 {
		t.Fatalf("placement after the changes %+v", p)
	}
	if v := c.node("web-7"); v.Assignments[0].Source != "web-app" || v.Labels["role"] != "web" {
		t.Fatalf("web-7 %+v", v)
	}
}
