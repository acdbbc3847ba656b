package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// One module fills in each node's region: three real hosts in two regions each get their own
// file, their declarations' digests differ, and a node without the label cannot be assigned
// the module (409, nothing changes).
func TestValuesPerNode(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	c.putModule("site", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/site.conf",
		Content: "node {{.Node}} serves {{.Labels.region}}\n"})
	regions := map[string]string{"web-1": "eu", "web-2": "eu", "web-3": "us"}
	var hosts []*host
	for _, n := range []string{"web-1", "web-2", "web-3"} {
		var reg struct{ Token string }
		c.call("POST", "/nodes", map[string]any{"name": n, "labels": map[string]string{"region": regions[n]}}, &reg)
		dir := t.TempDir()
		root := filepath.Join(dir, "root")
		os.MkdirAll(root, 0o755)
		hosts = append(hosts, startHost(t, ctl.url, n, reg.Token, root, filepath.Join(dir, "state")))
		c.assign(n, "site", false)
	}
	digests := map[string]bool{}
	for _, h := range hosts {
		want := "node " + h.node + " serves " + regions[h.node] + "\n"
		waitFor(t, 20*time.Second, h.node+" to write its own file", func() bool {
			return readFile(filepath.Join(h.root, "etc/site.conf")) == want && c.node(h.node).Status == hq.StatusConverged
		})
		sends := c.sends(h.node)
		digests[sends[0].Digest] = true
	}
	if len(digests) != 3 {
		t.Fatalf("%d distinct declaration digests for three nodes", len(digests))
	}

	c.register("web-4")
	before := c.node("web-4")
	status, body := c.raw("PUT", "/nodes/web-4/assignments/site", map[string]bool{"taken": false})
	if status != http.StatusConflict {
		t.Fatalf("assigning a module whose template the node cannot fill in: %d %s", status, body)
	}
	if after := c.node("web-4"); after.Generation != before.Generation || len(after.Assignments) != 0 {
		t.Fatalf("the refused assignment changed web-4: %+v", after)
	}
}
