package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// Seed 065: a resource that can never apply raises its hand — failed, then stuck, never
// applied or regressed, node-local or mesh-wide — and a failing gate says what it blocks.
func TestStuckResourcesRaiseTheirHand(t *testing.T) {
	ctl := startPair(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=3")
	c := ctl.client(t)
	fast := "HOSTD_INTERVAL=300ms"
	n1, n2, n3 := newHost(t, c, ctl.next(), "n1", fast), newHost(t, c, ctl.next(), "n2", fast), newHost(t, c, ctl.next(), "n3", fast)
	os.MkdirAll(filepath.Join(n1.root, "etc"), 0o755)
	os.WriteFile(filepath.Join(n1.root, "etc/broken"), nil, 0o644)

	c.putModule("bad", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/bad.conf", Content: "x\n", Validate: []string{"/bin/false"}})
	c.putModule("local", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/local.conf", Content: "x\n",
		Validate: []string{"/bin/sh", "-c", "test ! -e {root}/etc/broken"}})
	c.putModule("gated", gatedModule("/bin/false")...)
	c.putModule("regress", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/regress.conf", Content: "ok\n",
		Validate: []string{"/bin/sh", "-c", "test ! -e {root}/etc/regress.marker"}})
	for _, n := range []string{"n1", "n2", "n3"} {
		c.assign(n, "bad", false)
		c.assign(n, "local", false)
	}
	c.assign("n2", "gated", false)
	c.assign("n3", "regress", false)

	// n3: regress applies, then something changes the file and the put-back fails validate.
	waitFor(t, 20*time.Second, "regress applied on n3", func() bool {
		return resourceOf(c.node("n3"), "regress", "conf").State == hq.StateApplied
	})
	os.WriteFile(filepath.Join(n3.root, "etc/regress.marker"), nil, 0o644)
	os.WriteFile(filepath.Join(n3.root, "etc/regress.conf"), []byte("changed by hand\n"), 0o644)

	waitFor(t, 30*time.Second, "bad stuck on three nodes", func() bool {
		st := c.status()
		return len(st.Stuck) > 0 && slices.ContainsFunc(st.Stuck, func(s hq.MeshStuck) bool { return s.Module == "bad" && len(s.Nodes) == 3 })
	})
	waitFor(t, 30*time.Second, "local, gated and regress stuck", func() bool {
		return resourceOf(c.node("n1"), "local", "conf").State == hq.StateStuck &&
			resourceOf(c.node("n2"), "gated", "migrate").State == hq.StateStuck &&
			resourceOf(c.node("n3"), "regress", "conf").State == hq.StateStuck
	})
	st := c.status()
	scopes := map[string]hq.MeshStuck{}
	for _, s := range st.Stuck {
		if _, dup := scopes[s.Module]; dup {
			t.Fatalf("%s/%s listed twice in /status: %+v", s.Module, s.Resource, st.Stuck)
		}
		scopes[s.Module] = s
	}
	if s := scopes["bad"]; s.Scope != hq.ScopeMeshWide || !s.NeverApplied || len(s.Nodes) != 3 {
		t.Fatalf("bad/conf: %+v, want mesh-wide, never applied, on 3 nodes", s)
	}
	if s := scopes["local"]; s.Scope != hq.ScopeNodeLocal || !slices.Equal(s.Nodes, []string{"n1"}) {
		t.Fatalf("local/conf: %+v, want node-local on n1", s)
	}
	if s := scopes["regress"]; s.NeverApplied {
		t.Fatalf("regress/conf: %+v, want regressed (it applied once)", s)
	}
	if st.Nodes["stuck"] != 3 {
		t.Fatalf("nodes by status %v, want 3 stuck", st.Nodes)
	}

	v := c.node("n2")
	if v.Status != hq.StatusStuck {
		t.Fatalf("n2 status %s", v.Status)
	}
	line := findLine(v.Lines, "stuck: gated/migrate")
	if !strings.Contains(line, "(never applied, ") || !strings.HasSuffix(line, "blocks 2 resource(s)") {
		t.Fatalf("gate line %q", line)
	}
	if !strings.Contains(findLine(v.Lines, "stuck: bad/conf"), "never applied, ") {
		t.Fatalf("lines %q", v.Lines)
	}
	for _, name := range []string{"after1", "after2"} {
		r := resourceOf(v, "gated", name)
		if r.State != hq.StatePending || r.BlockedBy != "gated/migrate" || r.Attempts != 0 {
			t.Fatalf("%s: %+v, want pending, blocked by gated/migrate, never attempted", name, r)
		}
		if _, err := os.Stat(filepath.Join(n2.root, "etc/gated", name)); !os.IsNotExist(err) {
			t.Fatalf("%s exists on disk though its gate never applied", name)
		}
	}
	if !strings.Contains(n2.out.String(), "resource stuck") {
		t.Fatal("hostd did not log the stuck resource")
	}
	// Host and controller write the same line for every report.
	var reps struct{ Reports []hq.ReportView }
	c.call("GET", "/nodes/n2/reports?limit=100", nil, &reps)
	for _, r := range reps.Reports {
		if !strings.Contains(n2.out.String(), `msg="`+r.Summary+`"`) {
			t.Fatalf("the controller's line %q is not in hostd's log", r.Summary)
		}
	}

	// The fix: new revisions; everything applies, counts reset, the node converges.
	c.putModule("bad", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/bad.conf", Content: "x\n"})
	c.putModule("gated", gatedModule("/bin/true")...)
	waitFor(t, 20*time.Second, "n2 converged", func() bool { return c.node("n2").Status == hq.StatusConverged })
	if r := resourceOf(c.node("n2"), "gated", "migrate"); r.ConsecutiveFailures != 0 || r.NeverApplied {
		t.Fatalf("after the fix: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(n2.root, "etc/gated/after2")); err != nil {
		t.Fatalf("after2 not applied after the gate was fixed: %v", err)
	}
	if got := story(c.transitions("n2"), "bad", "conf"); !slices.Equal(got, []string{"pending", "failed", "stuck", "pending", "applied"}) {
		t.Fatalf("transitions of bad/conf on n2: %v", got)
	}
}

func gatedModule(action string) []hq.Resource {
	return []hq.Resource{
		{Name: "migrate", Kind: hq.KindAction, Command: []string{action}},
		{Name: "after1", Kind: hq.KindFile, Path: "/etc/gated/after1", Content: "1\n"},
		{Name: "after2", Kind: hq.KindFile, Path: "/etc/gated/after2", Content: "2\n"},
	}
}

func findLine(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
