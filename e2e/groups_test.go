package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// Seed 066: two files a program reads as a pair, and the program, apply together or not at
// all. An observer polling the program throughout never sees the new A with the old B.

// groupModule declares the pair: files a and b and the pair server that reads them at start,
// all in group "pair". b's validate refuses content with "bad" in it. health, when set, is the
// server's health URL; extra is passed to the server.
func groupModule(a, b, health string, extra ...string) []hq.Resource {
	server := hq.Resource{Name: "server", Kind: hq.KindService, Group: "pair", RestartOn: []string{"a", "b"},
		Command: append([]string{filepath.Join(bin, "pairserver"), "-a", "{root}/etc/pair/a.conf", "-b", "{root}/etc/pair/b.conf",
			"-addr-file", "{root}/var/app/server.addr"}, extra...)}
	if health != "" {
		server.Health = &hq.Health{HTTP: health}
	}
	return []hq.Resource{
		{Name: "vardir", Kind: hq.KindDirectory, Path: "/var/app"},
		{Name: "a", Kind: hq.KindFile, Path: "/etc/pair/a.conf", Content: a + "\n", Group: "pair"},
		{Name: "b", Kind: hq.KindFile, Path: "/etc/pair/b.conf", Content: b + "\n", Group: "pair",
			Validate: []string{"/bin/sh", "-c", "! grep -q bad {path}"}},
		server,
	}
}

// pairWatch polls a host's pair server every few milliseconds and counts every answer.
type pairWatch struct {
	h    *host
	mu   sync.Mutex
	seen map[string]int
	stop chan struct{}
	done chan struct{}
}

func watchPair(h *host) *pairWatch {
	w := &pairWatch{h: h, seen: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			w.poll()
		}
	}()
	return w
}

func (w *pairWatch) poll() {
	// "" is a server between a stop and a start: it serves nothing, which is no pair.
	if s := serving(w.h); s != "" {
		w.mu.Lock()
		w.seen[s]++
		w.mu.Unlock()
	}
}

// end stops the watch and fails the test if the server ever served a pair not in allowed, or
// never served at all.
func (w *pairWatch) end(t *testing.T, allowed ...string) {
	t.Helper()
	close(w.stop)
	<-w.done
	// Once more after the outcome is known, so a pair served from then on cannot slip by.
	w.poll()
	if len(w.seen) == 0 {
		t.Fatal("the observer never reached the pair server")
	}
	for s, n := range w.seen {
		if !slices.Contains(allowed, s) {
			t.Fatalf("the observer saw %q %d time(s); only %q may be served (all seen: %v)", s, n, allowed, w.seen)
		}
	}
	t.Logf("the observer saw %v", w.seen)
}

// groupStates waits until the node's resources are in the given states.
func groupStates(t *testing.T, c *client, node string, want map[string]hq.State) hq.NodeView {
	t.Helper()
	var v hq.NodeView
	waitFor(t, 30*time.Second, fmt.Sprintf("%s states %v", node, want), func() bool {
		v = c.node(node)
		for name, st := range want {
			if resourceOf(v, "app", name).State != st {
				return false
			}
		}
		return true
	})
	return v
}

func groupConverged(c *client, node string) func() bool {
	return func() bool {
		v := c.node(node)
		return v.Status == hq.StatusConverged && v.AppliedGeneration == v.Generation
	}
}

func checkGroupMidChange(t *testing.T, v hq.NodeView) {
	t.Helper()
	if v.Status != hq.StatusMidChange {
		t.Fatalf("node status %s, want mid-change (lines %q)", v.Status, v.Lines)
	}
	if !slices.ContainsFunc(v.Lines, func(l string) bool { return strings.Contains(l, "waiting group(s): app/pair") }) {
		t.Fatalf("no line names the waiting group: %q", v.Lines)
	}
}

func pairOnDisk(h *host, name string) string {
	return readFile(filepath.Join(h.root, "etc/pair", name))
}

// noGroupLeftovers fails if a journal or a temp or undo file outlived the group.
func noGroupLeftovers(t *testing.T, h *host) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(h.state, "group-journal.json")); !os.IsNotExist(err) {
		t.Fatalf("the group journal is still there (%v)", err)
	}
	es, _ := os.ReadDir(filepath.Join(h.root, "etc/pair"))
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".hostd-") {
			t.Fatalf("left behind %s", e.Name())
		}
	}
}

func TestGroupFailingMemberKeepsTheOldPair(t *testing.T) {
	ctl := startPair(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=1000")
	c := ctl.client(t)
	h := newHost(t, c, ctl.next(), "n1")
	c.putModule("app", groupModule("A1", "B1", "")...)
	c.assign("n1", "app", false)
	waitFor(t, 20*time.Second, "n1 converged", groupConverged(c, "n1"))
	waitFor(t, 10*time.Second, "the first pair served", func() bool { return serving(h) == "A1|B1" })

	// B cannot apply: nothing of the group changes, and the server keeps the old pair.
	w := watchPair(h)
	c.putModule("app", groupModule("A2", "bad", "")...)
	v := groupStates(t, c, "n1", map[string]hq.State{"b": hq.StateFailed, "a": hq.StateGroupedPending, "server": hq.StateGroupedPending})
	w.end(t, "A1|B1")
	if got := pairOnDisk(h, "a.conf"); got != "A1\n" {
		t.Fatalf("a.conf = %q while its partner failed", got)
	}
	if r := resourceOf(v, "app", "b"); !strings.Contains(r.LastError, "validate") {
		t.Fatalf("b's error %q", r.LastError)
	}
	for _, name := range []string{"a", "server"} {
		if r := resourceOf(v, "app", name); r.LastError != "group pair: app/b failed" || r.Group != "pair" {
			t.Fatalf("%s: error %q, group %q", name, r.LastError, r.Group)
		}
	}
	checkGroupMidChange(t, v)
	noGroupLeftovers(t, h)

	// B fixed: the new pair, whole.
	w = watchPair(h)
	c.putModule("app", groupModule("A2", "B2", "")...)
	waitFor(t, 20*time.Second, "n1 converged on the new pair", func() bool { return groupConverged(c, "n1")() && serving(h) == "A2|B2" })
	w.end(t, "A1|B1", "A2|B2")
	noGroupLeftovers(t, h)
}

func TestGroupUnhealthyServiceRollsBack(t *testing.T) {
	ctl := startPair(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=1000")
	c := ctl.client(t)
	// A long interval: nothing retries the group while the test looks at the rolled back state.
	h := newHost(t, c, ctl.next(), "n1", "HOSTD_INTERVAL=60s")
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	module := func(a, b string) []hq.Resource {
		return groupModule(a, b, "http://"+addr+"/healthz", "-addr", addr, "-healthy-unless", "A3")
	}
	c.putModule("app", module("A2", "B2")...)
	c.assign("n1", "app", false)
	waitFor(t, 20*time.Second, "n1 converged", groupConverged(c, "n1"))
	waitFor(t, 10*time.Second, "the first pair served", func() bool { return serving(h) == "A2|B2" })

	// Both files apply, but the server is unhealthy on them: all of it goes back.
	w := watchPair(h)
	c.putModule("app", module("A3", "B3")...)
	v := groupStates(t, c, "n1", map[string]hq.State{"server": hq.StateFailed, "a": hq.StateGroupedPending, "b": hq.StateGroupedPending})
	// The server ran on the new pair while its health was checked: a whole pair, never a mix.
	w.end(t, "A2|B2", "A3|B3")
	if r := resourceOf(v, "app", "server"); !strings.Contains(r.LastError, "did not answer 2xx") {
		t.Fatalf("server's error %q", r.LastError)
	}
	if a, b := pairOnDisk(h, "a.conf"), pairOnDisk(h, "b.conf"); a != "A2\n" || b != "B2\n" {
		t.Fatalf("on disk after the rollback: a %q, b %q", a, b)
	}
	if got := serving(h); got != "A2|B2" {
		t.Fatalf("after the rollback the server serves %q, want the old pair", got)
	}
	checkGroupMidChange(t, v)
	noGroupLeftovers(t, h)
}

func TestGroupKilledBetweenCommitsRollsBackAtStart(t *testing.T) {
	ctl := startPair(t, testdb.New(t))
	c := ctl.client(t)
	token := c.register("n1")
	dir := t.TempDir()
	root, state := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	os.MkdirAll(root, 0o755)
	h := startHost(t, ctl.next(), "n1", token, root, state)
	c.putModule("app", groupModule("A1", "B1", "")...)
	c.assign("n1", "app", false)
	waitFor(t, 20*time.Second, "n1 converged", groupConverged(c, "n1"))
	h.stop()

	// Again, with the failpoint that pauses between two commits of a group.
	h = startHost(t, ctl.next(), "n1", token, root, state, "HOSTD_FAILPOINT_GROUP_COMMIT_PAUSE=1m")
	waitFor(t, 10*time.Second, "the first pair served", func() bool { return serving(h) == "A1|B1" })
	w := watchPair(h)
	c.putModule("app", groupModule("A2", "B2", "")...)
	waitFor(t, 20*time.Second, "the failpoint", func() bool {
		return strings.Contains(h.out.String(), "failpoint: paused between group commits")
	})
	h.kill()
	// The crash left the mixed state on disk, and the journal that repairs it.
	if a, b := pairOnDisk(h, "a.conf"), pairOnDisk(h, "b.conf"); a != "A2\n" || b != "B1\n" {
		t.Fatalf("killed between commits: a %q, b %q; want A2 and B1", a, b)
	}
	if _, err := os.Stat(filepath.Join(state, "group-journal.json")); err != nil {
		t.Fatalf("no journal after a kill between commits: %v", err)
	}

	h = startHost(t, ctl.next(), "n1", token, root, state)
	waitFor(t, 20*time.Second, "n1 converged on the new pair", func() bool { return groupConverged(c, "n1")() && serving(h) == "A2|B2" })
	w.end(t, "A1|B1", "A2|B2")
	out := h.out.String()
	rolled, running := strings.Index(out, "rolled back a group interrupted before its last commit"), strings.Index(out, "hostd running")
	if rolled < 0 || running < 0 || rolled > running {
		t.Fatalf("the rollback (at %d) did not come before hostd ran (at %d):\n%s", rolled, running, out)
	}
	noGroupLeftovers(t, h)
}

func TestGroupFailureLeavesIndependentResourcesApplied(t *testing.T) {
	ctl := startPair(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=1000")
	c := ctl.client(t)
	h := newHost(t, c, ctl.next(), "n1")
	c.putModule("app", append(groupModule("A1", "bad", ""),
		hq.Resource{Name: "other", Kind: hq.KindFile, Path: "/etc/other.conf", Content: "O1\n"})...)
	c.assign("n1", "app", false)
	v := groupStates(t, c, "n1", map[string]hq.State{"other": hq.StateApplied, "vardir": hq.StateApplied,
		"b": hq.StateFailed, "a": hq.StateGroupedPending, "server": hq.StateGroupedPending})
	if got := readFile(filepath.Join(h.root, "etc/other.conf")); got != "O1\n" {
		t.Fatalf("other.conf = %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.root, "etc/pair/a.conf")); !os.IsNotExist(err) {
		t.Fatalf("a.conf exists while its group failed: %v", err)
	}
	if s := serving(h); s != "" {
		t.Fatalf("the server of a failed group serves %q", s)
	}
	if line := v.LastReport.Summary; line != "applied 2 resource(s), 1 failed, 2 grouped-pending" {
		t.Fatalf("report line %q", line)
	}
	checkGroupMidChange(t, v)
}
