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
