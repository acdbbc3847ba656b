package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/loadgen"
)

// Two controllers on one database, hosts split between them and writes arriving at both; one
// is killed mid-load. The hosts that had it first move to the other (HOSTD_CONTROLLER lists
// both) and converge on a change made after the kill, and every report either controller
// acknowledged is in the database.
func TestHostsMoveToTheOtherControllerWhenOneDies(t *testing.T) {
	db := testdb.New(t)
	a, b := startController(t, db), startController(t, db)
	ca, cb := newClient(t, a.url), newClient(t, b.url)
	conf := func(v string) hq.Resource {
		return hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: v}
	}
	ca.putModule("web", conf("1\n"))
	ca.putModule("app", campaignModule()...)

	// Real hosts: two that try a first, two that try b first.
	hosts := map[string]*host{}
	for i, name := range []string{"a-1", "a-2", "b-1", "b-2"} {
		first, second, c := a.url, b.url, ca
		if i >= 2 {
			first, second, c = b.url, a.url, cb
		}
		hosts[name] = newHost(t, c, first, name, "HOSTD_CONTROLLER="+first+","+second, "HOSTD_WAIT=2s")
		cb.assign(name, "web", false)
	}
	converged := func(want string) func() bool {
		return func() bool {
			for _, h := range hosts {
				if readFile(filepath.Join(h.root, "etc/app.conf")) != want {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, 30*time.Second, "every host on revision 1", converged("1\n"))

	// Hollow hosts keep both controllers busy with reports, each its own controller's.
	tr := loadgen.NewTransport(16)
	tr.TLSClientConfig = suiteTLS()
	client := &http.Client{Transport: tr}
	defer client.CloseIdleConnections()
	var reporting []*reportingHost
	for i := range 8 {
		name, base, c := fmt.Sprintf("hollow-%d", i), a.url, ca
		if i%2 == 1 {
			base, c = b.url, cb
		}
		token := c.register(name)
		c.assign(name, "app", false)
		h := loadgen.NewHost(base, name, token, client, nil)
		d, call := h.Declaration(t.Context(), -1, 0)
		if d == nil {
			t.Fatalf("%s: no declaration: %d %v", name, call.Status, call.Err)
		}
		reporting = append(reporting, &reportingHost{Host: h, bodies: campaignBodies(d)})
	}
	ctx, stop := context.WithCancel(t.Context())
	var running sync.WaitGroup
	for _, h := range reporting {
		running.Go(func() { h.run(ctx) })
	}
	acked := func() int {
		n := 0
		for _, h := range reporting {
			got, _ := h.snapshot()
			n += len(got)
		}
		return n
	}
	waitFor(t, 20*time.Second, "reports acknowledged by both", func() bool { return acked() >= 100 })
	a.kill()

	cb.putModule("web", conf("2\n"))
	waitFor(t, 60*time.Second, "every host on revision 2 through the controller left", converged("2\n"))
	stop()
	running.Wait()
	for _, h := range reporting {
		if _, refused := h.snapshot(); refused != "" {
			t.Fatalf("%s: a report was refused: %s", h.Name, refused)
		}
	}
	checkDatabase(t, db, reporting)
	for _, name := range []string{"a-1", "a-2"} {
		if out := hosts[name].out.String(); !strings.Contains(out, "trying "+b.url+" next") {
			t.Errorf("%s never said it turned to %s:\n%s", name, b.url, out)
		}
	}
}

// Two controllers on one database and a rollout under way; the controller running the rollout
// worker (the holder of its lease) is killed. The other takes the lease within HQ_LEASE and the
// rollout completes, through hosts that move to it.
func TestARolloutGoesOnWhenItsControllerDies(t *testing.T) {
	db := testdb.New(t)
	ctl := startPair(t, db, "HQ_LEASE=2s")
	c := ctl.client(t)
	conf := func(v string) hq.Resource {
		return hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: v}
	}
	c.putModule("app", conf("1\n"))
	nodes := []string{"web-1", "web-2", "web-3", "web-4"}
	for _, n := range nodes {
		labelledHost(t, c, ctl.next(), n, map[string]string{"role": "web"}, "HOSTD_WAIT=2s")
	}
	c.call("PUT", "/placements/web", map[string]any{"module": "app", "selector": "role=web",
		"rollout": map[string]any{"canary": 1, "max_unavailable": 1}}, nil)
	onRevision := func(c *client, rev int64) func() bool {
		return func() bool {
			for _, n := range nodes {
				if !converged(c, n) || pin(c.node(n), "app") != rev {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, 30*time.Second, "app r1 everywhere", onRevision(c, 1))
	c.putModule("app", conf("2\n"))
	var r hq.Rollout
	waitFor(t, 30*time.Second, "the canary done", func() bool {
		rs := c.rollouts()
		if len(rs) == 1 {
			r = rs[0]
		}
		return r.Done >= 1
	})
	if r.State != hq.RolloutProgressing || r.Done == len(nodes) {
		t.Fatalf("rollout %+v: want it under way", r)
	}
	holder := leaseHolder(t, db, "rollouts")
	dead, survivor := ctl.a, ctl.b
	if !strings.Contains(holder, fmt.Sprintf(":%d:", dead.cmd.Process.Pid)) {
		dead, survivor = survivor, dead
	}
	if !strings.Contains(holder, fmt.Sprintf(":%d:", dead.cmd.Process.Pid)) {
		t.Fatalf("the rollouts lease is held by %q, neither controller", holder)
	}
	dead.kill()
	s := newClient(t, survivor.url)
	waitFor(t, 60*time.Second, "the rollout complete through the controller left", func() bool {
		return s.rollout(r.ID).State == hq.RolloutComplete
	})
	waitFor(t, 30*time.Second, "app r2 everywhere", onRevision(s, 2))
	if got := leaseHolder(t, db, "rollouts"); !strings.Contains(got, fmt.Sprintf(":%d:", survivor.cmd.Process.Pid)) {
		t.Fatalf("the rollouts lease is held by %q, not the controller left", got)
	}
}

// leaseHolder is the controller holding a worker's lease, as worker_leases says.
func leaseHolder(t *testing.T, db, worker string) string {
	t.Helper()
	var holder string
	q := "SELECT holder FROM worker_leases WHERE worker = ?"
	if err := openRaw(t, db).QueryRow(testdb.Rebind(q), worker).Scan(&holder); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return holder
}
