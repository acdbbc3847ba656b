package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
	"github.com/meshhq/hq/internal/testdb"
)

// A container that exits on its own two seconds after its start is failed with its last lines,
// and stuck after the configured attempts; one that is paused fails its command health check
// and is failed; a take starts a container without a drift row, while a stop behind hostd's
// back is one.
func TestContainerLiveness(t *testing.T) {
	env := podmantest.New(t)
	ctl := startController(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=3")
	c := newClient(t, ctl.url)
	newHost(t, c, ctl.url, "n1", env.Vars...)

	crashing := hq.Resource{Name: "crash", Kind: hq.KindContainer, Image: env.Image,
		Command: []string{"sh", "-c", "echo starting; sleep 2; echo 'line 3: unknown directive'; exit 3"}}
	c.putModule("flaky", crashing)
	c.assign("n1", "flaky", true)
	var r hq.ResourceView
	waitFor(t, 60*time.Second, "flaky/crash failed", func() bool {
		r = resourceOf(c.node("n1"), "flaky", "crash")
		return r.State == hq.StateFailed || r.State == hq.StateStuck
	})
	if !strings.Contains(r.LastError, "exited with code 3") || !strings.Contains(r.LastError, "line 3: unknown directive") {
		t.Fatalf("flaky/crash failed with %q: want its exit code and its last lines", r.LastError)
	}
	waitFor(t, 90*time.Second, "flaky/crash stuck", func() bool {
		r = resourceOf(c.node("n1"), "flaky", "crash")
		return r.State == hq.StateStuck
	})
	if r.NeverApplied {
		t.Fatalf("flaky/crash ran before it crashed, yet reads never applied: %+v", r)
	}
	if n := len(c.drifts("n1")); n != 0 {
		t.Fatalf("a crash loop recorded %d drift row(s): a crash is a failure, not drift", n)
	}

	port := freePort(t)
	web := podmantest.Web("web", env.Image, port, func(r *hq.Resource) {
		r.Health = &hq.Health{Command: []string{"sh", "-c", "true"}}
	})
	c.putModule("app", web)
	c.assign("n1", "app", false)
	waitFor(t, 60*time.Second, "app waiting on take", func() bool {
		return c.node("n1").Status == hq.StatusStuck && resourceOf(c.node("n1"), "app", "web").State == hq.StateHeld
	})
	c.take("n1", "app")
	waitFor(t, 60*time.Second, "app/web applied after the take", func() bool {
		return resourceOf(c.node("n1"), "app", "web").State == hq.StateApplied && fetch(fmt.Sprintf("http://127.0.0.1:%d/", port)) != ""
	})
	if ds := c.drifts("n1"); len(ds) != 0 {
		t.Fatalf("the take recorded drift: %+v", ds)
	}

	env.Podman("pause", "hq-app-web")
	waitFor(t, 30*time.Second, "the paused app/web failed", func() bool {
		r = resourceOf(c.node("n1"), "app", "web")
		return (r.State == hq.StateFailed || r.State == hq.StateStuck) && strings.Contains(r.LastError, "paused")
	})
	waitFor(t, 30*time.Second, "app/web applied again", func() bool {
		return resourceOf(c.node("n1"), "app", "web").State == hq.StateApplied
	})
	if ds := c.drifts("n1"); len(ds) != 0 {
		t.Fatalf("a paused container recorded drift: %+v", ds)
	}

	// hostd may be starting it again while the stop runs (its first crash is still settling):
	// the stop's own error is not what is tested, the drift row is.
	env.TryPodman("stop", "-t", "1", "hq-app-web")
	if d := driftOf(t, c, "n1", "app/web", 0); !strings.HasPrefix(d.Detail, "container exited") && !strings.HasPrefix(d.Detail, "container not running") {
		t.Fatalf("a stop behind hostd's back: drift detail %q", d.Detail)
	}
}
