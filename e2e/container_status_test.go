package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
	"github.com/meshhq/hq/internal/testdb"
)

// Once a node converges, GET /nodes/{node} says what runs for its container: the id podman
// gives it, the digest of its image, when it started and that its health check passes.
func TestNodeShowsWhatRunsForItsContainers(t *testing.T) {
	env := podmantest.New(t)
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	newHost(t, c, ctl.url, "n1", env.Vars...)
	port := freePort(t)
	c.putModule("app", podmantest.Web("web", env.Image, port))
	gen := c.assign("n1", "app", true)
	convergedAt(t, c, "n1", gen, "n1 converged with its container")

	var got *hq.ContainerStatus
	waitFor(t, 30*time.Second, "n1's container status", func() bool {
		for _, r := range c.node("n1").Resources {
			if r.Module == "app" && r.Resource == "web" {
				got = r.Container
			}
		}
		return got != nil
	})
	inspect := strings.Fields(env.Podman("inspect", "--format", "{{.Id}} {{.State.StartedAt.Unix}}", "hq-app-web"))
	if len(inspect) != 2 {
		t.Fatalf("podman inspect: %v", inspect)
	}
	_, digest, _ := strings.Cut(env.Image, "@")
	started, _ := strconv.ParseInt(inspect[1], 10, 64)
	if got.ID != inspect[0] || got.ImageDigest != digest || got.StartedAt.Unix() != started ||
		got.Health != hq.HealthHealthy || got.Restarts != 0 || got.EarlierSpec {
		t.Fatalf("GET /nodes/n1 says %+v; podman says id %s, started %d, image %s", got, inspect[0], started, digest)
	}
	if got.StartedAt.IsZero() || time.Since(got.StartedAt) > 10*time.Minute {
		t.Fatalf("started at %s", got.StartedAt)
	}
	if got := fetch(fmt.Sprintf("http://127.0.0.1:%d/", port)); got != "hello from the image\n" {
		t.Fatalf("the container serves %q", got)
	}
}
