package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the database as sqlite3 sees it, without the controller

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
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
	ctl := startPair(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=3")
	c := ctl.client(t)
	c.putModule("app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "v1\n"})
	hosts := map[string]*host{}
	for i := 1; i <= 6; i++ {
		labels := map[string]string{"role": "web"}
		if i <= 2 {
			labels["region"] = "eu"
		}
		n := fmt.Sprintf("web-%d", i)
		hosts[n] = labelledHost(t, c, ctl.next(), n, labels)
	}
	hosts["db-1"] = labelledHost(t, c, ctl.next(), "db-1", map[string]string{"role": "db"})

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
	hosts["web-7"] = labelledHost(t, c, ctl.next(), "web-7", map[string]string{"role": "web"})
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

func (c *client) rollouts() []hq.Rollout {
	c.t.Helper()
	var out struct{ Rollouts []hq.Rollout }
	c.call("GET", "/rollouts", nil, &out)
	return out.Rollouts
}

func (c *client) rollout(id int64) hq.Rollout {
	c.t.Helper()
	var r hq.Rollout
	c.call("GET", fmt.Sprintf("/rollouts/%d", id), nil, &r)
	return r
}

func (c *client) reports(node string) []hq.ReportView {
	c.t.Helper()
	var out struct{ Reports []hq.ReportView }
	c.call("GET", "/nodes/"+node+"/reports?limit=1000", nil, &out)
	return out.Reports
}

func pin(v hq.NodeView, module string) int64 {
	for _, a := range v.Assignments {
		if a.Module == module {
			return a.Revision
		}
	}
	return 0
}

// lastSent is the newest generation a node was ever sent.
func lastSent(c *client, node string) int64 {
	var g int64
	for _, s := range c.sends(node) {
		g = max(g, s.Generation)
	}
	return g
}

// A bad revision stops at its canary and is undone there; resume goes on, abort pins back
// what advanced; a good revision goes wave by wave, never more than max_unavailable in flight.
func TestRolloutOnRealHosts(t *testing.T) {
	db := testdb.New(t)
	ctl := startPair(t, db, "HQ_STUCK_ATTEMPTS=2")
	c := ctl.client(t)
	conf := func(content string, validate ...string) hq.Resource {
		return hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: content, Validate: validate}
	}
	c.putModule("app", conf("v1\n"))
	nodes := []string{"web-1", "web-2", "web-3", "web-4", "web-5"}
	hosts := map[string]*host{}
	for _, n := range nodes {
		hosts[n] = labelledHost(t, c, ctl.next(), n, map[string]string{"role": "web"})
	}
	c.call("PUT", "/placements/web", map[string]any{"module": "app", "selector": "role=web",
		"rollout": map[string]any{"canary": 1, "max_unavailable": 2, "failure_budget": 0, "progress_deadline": "1m", "auto_revert": true}}, nil)
	allConverged := func(rev int64) func() bool {
		return func() bool {
			for _, n := range nodes {
				if !converged(c, n) || pin(c.node(n), "app") != rev {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, 30*time.Second, "app r1 everywhere", allConverged(1))
	before := map[string]int64{}
	for _, n := range nodes {
		before[n] = lastSent(c, n)
	}

	// A revision whose file fails validate everywhere: the canary fails, is pinned back, and
	// the rollout pauses; no other node was ever sent it.
	c.putModule("app", conf("v2\n", "/bin/false"))
	var bad hq.Rollout
	waitFor(t, 30*time.Second, "the bad rollout to pause", func() bool {
		rs := c.rollouts()
		bad = rs[0]
		return len(rs) == 1 && bad.State == hq.RolloutPaused
	})
	want := "rollout app r1→r2: 0 of 5 node(s) done, 0 in flight, 1 failed (budget 0): paused: app/conf failed on web-1"
	if bad.Line != want {
		t.Fatalf("line %q, want %q", bad.Line, want)
	}
	st := c.status()
	if len(st.Rollouts) != 1 || !slicesContains(st.Lines, want) {
		t.Fatalf("/status lines %q", st.Lines)
	}
	waitFor(t, 30*time.Second, "web-1 back on r1 and converged", func() bool {
		return converged(c, "web-1") && pin(c.node("web-1"), "app") == 1 && readFile(filepath.Join(hosts["web-1"].root, "etc/app.conf")) == "v1\n"
	})
	for _, n := range nodes[1:] {
		if g := lastSent(c, n); g != before[n] {
			t.Fatalf("%s was sent generation %d during the paused rollout (had %d)", n, g, before[n])
		}
	}
	if v := c.node("web-2"); len(v.Rollouts) != 1 || v.Rollouts[0].ID != bad.ID || v.Rollouts[0].NodeState != hq.RolloutNodePending {
		t.Fatalf("web-2's rollouts %+v", v.Rollouts)
	}

	// Resume goes on with the next wave; abort pins back every node it advanced.
	c.call("POST", fmt.Sprintf("/rollouts/%d/resume", bad.ID), nil, nil)
	waitFor(t, 30*time.Second, "the next wave", func() bool {
		return pin(c.node("web-2"), "app") == 2 || c.rollout(bad.ID).State == hq.RolloutPaused
	})
	c.call("POST", fmt.Sprintf("/rollouts/%d/abort", bad.ID), nil, nil)
	r := c.rollout(bad.ID)
	if r.State != hq.RolloutAborted {
		t.Fatalf("after abort: %+v", r)
	}
	advanced := 0
	for _, p := range r.Progress {
		if p.Wave > 0 {
			advanced++
			if p.State != hq.RolloutNodeReverted {
				t.Fatalf("%s after abort: %+v", p.Node, p)
			}
		}
	}
	if advanced != 3 {
		t.Fatalf("%d node(s) advanced, want the canary and a wave of two: %+v", advanced, r.Progress)
	}
	waitFor(t, 30*time.Second, "app r1 everywhere after the abort", allConverged(1))
	if status, _ := c.raw("POST", fmt.Sprintf("/rollouts/%d/resume", bad.ID), nil); status != 409 {
		t.Fatalf("resume of an aborted rollout: %d", status)
	}

	// A good revision: wave by wave, never more than two nodes in flight, then complete.
	c.putModule("app", conf("v3\n"))
	var good hq.Rollout
	waitFor(t, 60*time.Second, "the good rollout to complete", func() bool {
		good = c.rollouts()[0]
		return good.ToRevision == 3 && good.State == hq.RolloutComplete
	})
	waitFor(t, 30*time.Second, "app r3 everywhere", allConverged(3))
	good = c.rollout(good.ID)
	type span struct{ from, to time.Time }
	var spans []span
	waves := map[int]int{}
	for _, p := range good.Progress {
		waves[p.Wave]++
		var sp span
		for _, s := range c.sends(p.Node) {
			if s.Generation >= p.Generation && (sp.from.IsZero() || s.SentAt.Before(sp.from)) {
				sp.from = s.SentAt
			}
		}
		for _, rep := range c.reports(p.Node) {
			if rep.Generation >= p.Generation && (sp.to.IsZero() || rep.At.Before(sp.to)) {
				sp.to = rep.At
			}
		}
		if sp.from.IsZero() || sp.to.IsZero() || p.State != hq.RolloutNodeDone {
			t.Fatalf("%s: %+v, sent %v, reported %v", p.Node, p, sp.from, sp.to)
		}
		spans = append(spans, sp)
	}
	// The canary alone, then batches that keep two in flight: a node done early lets the next
	// one go as a wave of its own.
	for w, n := range waves {
		if w == 1 && n != 1 || w < 1 || n > 2 {
			t.Fatalf("waves %v, want the canary alone, then waves of at most two", waves)
		}
	}
	for _, a := range spans {
		inFlight := 0
		for _, b := range spans {
			if !b.from.After(a.from) && b.to.After(a.from) {
				inFlight++
			}
		}
		if inFlight > 2 {
			t.Fatalf("%d nodes in flight at %v: %+v", inFlight, a.from, spans)
		}
	}
	for n, h := range hosts {
		if got := readFile(filepath.Join(h.root, "etc/app.conf")); got != "v3\n" {
			t.Fatalf("%s: app.conf %q", n, got)
		}
	}

	// The lifecycle trigger refuses complete → progressing from sqlite3 too.
	raw := openRaw(t, db)
	_, err := raw.Exec(testdb.Rebind(`UPDATE rollouts SET state = 'progressing' WHERE id = ?`), good.ID)
	if err == nil || !strings.Contains(err.Error(), "rollout_lifecycle") {
		t.Fatalf("complete → progressing by hand: %v", err)
	}
	var failedWhy string
	raw.QueryRow(testdb.Rebind(testdb.Pick(`SELECT group_concat(node || ': ' || reason, '; ')`, `SELECT string_agg(node || ': ' || reason, '; ')`)+
		` FROM rollout_nodes WHERE rollout = ? AND state IN ('failed', 'reverted')`), bad.ID).Scan(&failedWhy)
	if !strings.Contains(failedWhy, "web-1: app/conf failed") {
		t.Fatalf("which nodes failed rollout %d and why: %q", bad.ID, failedWhy)
	}
}

func slicesContains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}
