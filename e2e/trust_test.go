package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	hqclient "github.com/meshhq/hq/client"
	"github.com/meshhq/hq/internal/testdb"
)

// What one node's token can cost the controller (docs/security.md).

// closingClient speaks to the controller without keeping connections: with HQ_MAX_CONNS small,
// an idle one would hold a slot the test counts.
func closingClient(ctl *controller) *hqclient.Client {
	c := hqclient.New(ctl.url, adminToken)
	c.HTTP = &http.Client{Transport: &http.Transport{TLSClientConfig: suiteTLS(), DisableKeepAlives: true}}
	return c
}

// rawTLS opens a connection to the controller, its handshake done.
func rawTLS(t *testing.T, ctl *controller) *tls.Conn {
	t.Helper()
	d := &net.Dialer{Timeout: 10 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", ctl.addr, suiteTLS())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// resetConn closes c with a reset, as a flood of connect-and-reset does.
func resetConn(c *tls.Conn) {
	c.NetConn().(*net.TCPConn).SetLinger(0)
	c.NetConn().Close()
}

// With HQ_MAX_CONNS=30, one node's token opens 30 long-polls and resets them: two waited
// (a newer poll takes the oldest's place, answered at once), those two leave as their clients
// go, and /healthz and another node's poll are answered within a second; the waiting polls are
// back to 0 within 2 s. In the lot and with HQ_LONGPOLL=handler.
func TestOneNodesResetPollsDoNotStarveTheController(t *testing.T) {
	for _, mode := range []string{"lot", "handler"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			ctl := startController(t, testdb.New(t), "HQ_MAX_CONNS=30", "HQ_LONGPOLL="+mode)
			c := closingClient(ctl)
			n1 := must[hqclient.Registration](t)(c.Register(ctx, "n1"))
			n2 := must[hqclient.Registration](t)(c.Register(ctx, "n2"))
			const polls = 30
			conns := make([]*tls.Conn, polls)
			for i := range conns {
				conns[i] = rawTLS(t, ctl)
				fmt.Fprintf(conns[i], "GET /api/v1/nodes/n1/declaration?after=%d&wait=20s HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\n\r\n", n1.Generation, n1.Token)
			}
			// Every poll but the newest two is answered at once, told to come back later.
			var mu sync.Mutex
			answered := 0
			var wg sync.WaitGroup
			for _, conn := range conns {
				wg.Go(func() {
					conn.SetReadDeadline(time.Now().Add(3 * time.Second))
					resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
					if err != nil {
						return
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusNotModified && resp.Header.Get("Retry-After") != "" {
						mu.Lock()
						answered++
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if answered != polls-2 {
				t.Fatalf("%d of %d polls answered at once, want all but the newest two", answered, polls)
			}
			for _, conn := range conns {
				resetConn(conn)
			}
			reset := time.Now()
			hc := c.HTTP
			resp, err := hc.Get(ctl.url + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if took := time.Since(reset); resp.StatusCode != http.StatusOK || took > time.Second {
				t.Fatalf("/healthz: %d after %s", resp.StatusCode, took)
			}
			req, _ := http.NewRequest("GET", ctl.url+"/api/v1/nodes/n2/declaration?wait=20s", nil)
			req.Header.Set("Authorization", "Bearer "+n2.Token)
			resp, err = hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if took := time.Since(reset); resp.StatusCode != http.StatusOK || took > time.Second {
				t.Fatalf("n2's poll: %d after %s", resp.StatusCode, took)
			}
			waitFor(t, 2*time.Second, "hq_long_polls_waiting back to 0", func() bool {
				page, err := c.Metrics(ctx)
				return err == nil && strings.Contains(page, "\nhq_long_polls_waiting 0\n")
			})
		})
	}
}
