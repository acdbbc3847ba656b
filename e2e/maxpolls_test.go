package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshhq/hq"
	hqclient "github.com/meshhq/hq/client"
	"github.com/meshhq/hq/internal/testdb"
)

// Past HQ_MAX_POLLS a fleet is served by polling: with room for 5 long-polls and 20 hosts,
// every host converges, /metrics says 5 hold a poll and 15 poll, and a new revision reaches
// every host within its interval (1 s here) rather than the 30 s a deferred poll is asked to
// wait at most.
func TestHostsPastMaxPollsPollOnTheirInterval(t *testing.T) {
	ctx := context.Background()
	ctl := startController(t, testdb.New(t), "HQ_MAX_POLLS=5")
	c := hqclient.New(ctl.url, adminToken)
	const n = 20
	hosts := make([]*host, n)
	for i := range hosts {
		hosts[i] = opsHost(t, c, fmt.Sprintf("poll-%02d", i), "HOSTD_INTERVAL=1s", "HOSTD_WAIT=5s")
	}
	motd := func(text string) []hq.Resource {
		return []hq.Resource{{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: text}}
	}
	must[hqclient.PutResult](t)(c.PutModule(ctx, "base", motd("one\n")))
	for _, h := range hosts {
		must[int64](t)(c.Assign(ctx, h.node, "base", false))
	}
	converged := func(text string) func() bool {
		return func() bool {
			for _, h := range hosts {
				if b, err := os.ReadFile(filepath.Join(h.root, "etc/motd")); err != nil || string(b) != text {
					return false
				}
			}
			st, err := c.Status(ctx)
			return err == nil && st.Nodes[string(hq.StatusConverged)] == n
		}
	}
	waitFor(t, 60*time.Second, "every host converged on the first revision", converged("one\n"))

	var last map[string]float64
	waitFor(t, 30*time.Second, "/metrics to say 5 hosts hold a poll and 15 poll", func() bool {
		page, err := c.Metrics(ctx)
		if err != nil {
			return false
		}
		last = scrape(t, page)
		return last["hq_long_polls_waiting"] == 5 && last["hq_hosts_polling"] == n-5
	})
	if last["hq_long_polls_deferred_total"] < n-5 {
		t.Errorf("hq_long_polls_deferred_total = %v, want at least %d", last["hq_long_polls_deferred_total"], n-5)
	}

	start := time.Now()
	must[hqclient.PutResult](t)(c.PutModule(ctx, "base", motd("two\n")))
	waitFor(t, 20*time.Second, "every host on the second revision", converged("two\n"))
	t.Logf("a revision reached %d hosts, %d of them polling, in %s", n, n-5, time.Since(start).Round(time.Millisecond))
}
