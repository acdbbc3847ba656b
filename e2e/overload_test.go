package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// A controller past its bound of reports in flight sheds them with 503 and Retry-After before
// reading them; hostd waits as it is told and its next report lands; nothing acknowledged is
// lost.
func TestOverloadShedsReportsAndHostdComesBack(t *testing.T) {
	// The simulated hosts report as fast as they can, far past any host's rate: the node rate
	// is off, so that it is the bound of reports in flight they meet.
	ctl := startController(t, testdb.New(t), "HQ_MAX_REPORTS_IN_FLIGHT=1", "HQ_RETRY_AFTER=1", "HQ_NODE_REPORT_RATE=0")
	c := newClient(t, ctl.url)
	rs := make([]hq.Resource, 100)
	for i := range rs {
		rs[i] = hq.Resource{Name: fmt.Sprintf("f%03d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/f%03d", i), Content: "x\n"}
	}
	c.putModule("app", rs...)
	h := newHost(t, c, ctl.url, "web-1")
	c.assign("web-1", "app", false)
	waitFor(t, 20*time.Second, "web-1 converged", func() bool { return c.node("web-1").Status == hq.StatusConverged })

	// Simulated hosts report as fast as they can, each report moving rows.
	var sims []*reporter
	for i := range 8 {
		n := fmt.Sprintf("sim-%d", i)
		tok := c.register(n)
		c.assign(n, "app", false)
		sim := newReporter(t, ctl.url, n, tok)
		sim.cause = "taking in as many reports as it can"
		sims = append(sims, sim)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, sim := range sims {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				sim.post(i%2 == 0, i)
			}
		})
	}
	// While they do, a change reaches web-1: its report of it must get through the crowd.
	c.putModule("app", append(rs[:99:99], hq.Resource{Name: "f099", Kind: hq.KindFile, Path: "/etc/app/f099", Content: "y\n"})...)
	waitFor(t, 30*time.Second, "hostd to be told to wait", func() bool {
		return strings.Contains(h.out.String(), "controller overloaded: posting the report")
	})
	waitFor(t, 30*time.Second, "web-1's report of the change to land", func() bool {
		v := c.node("web-1")
		return v.AppliedGeneration == v.Generation && v.Status == hq.StatusConverged
	})
	close(stop)
	wg.Wait()

	shed := 0
	for _, sim := range sims {
		sim.mu.Lock()
		shed += sim.unavailable
		var reps struct{ Reports []hq.ReportView }
		c.call("GET", "/nodes/"+sim.node+"/reports?limit=1000", nil, &reps)
		rows := map[int64]int64{}
		for _, r := range reps.Reports {
			rows[r.ID] = 1 + r.Repeats
		}
		for id, n := range sim.acked {
			if rows[id] < int64(n) {
				t.Errorf("%s: report %d acknowledged %d time(s), stored %d", sim.node, id, n, rows[id])
			}
		}
		sim.mu.Unlock()
	}
	if shed == 0 {
		t.Fatal("no report was shed: the bound was never reached")
	}
	// The controller is itself again once the crowd is gone.
	resp, err := http.Get(ctl.url + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz after the overload: %v %v", resp, err)
	}
	resp.Body.Close()
}
