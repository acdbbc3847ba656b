package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
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

// declared assigns a module of three files to a new node and fetches its declaration as its
// host would.
func declared(t *testing.T, c *hqclient.Client, ctl *controller, node string) (string, hq.Declaration) {
	t.Helper()
	ctx := context.Background()
	reg := must[hqclient.Registration](t)(c.Register(ctx, node))
	var rs []hq.Resource
	for i := range 3 {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("f%d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/f%d", i), Content: "x\n"})
	}
	must[hqclient.PutResult](t)(c.PutModule(ctx, "app", rs))
	must[int64](t)(c.Assign(ctx, node, "app", true))
	req, _ := http.NewRequest("GET", ctl.url+"/api/v1/nodes/"+node+"/declaration", nil)
	req.Header.Set("Authorization", "Bearer "+reg.Token)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d hq.Declaration
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("declaration: %d %v", resp.StatusCode, err)
	}
	return reg.Token, d
}

// reportOf is a report of d, every resource applied, or, failed, every one failed.
func reportOf(d hq.Declaration, failed bool) []byte {
	rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Signature: d.Signature}
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			res := hq.Result{Module: m.Name, Resource: r.Name, Outcome: hq.StateApplied, Attempted: true}
			if failed {
				res.Outcome, res.Error = hq.StateFailed, "failed"
			}
			rep.Results = append(rep.Results, res)
		}
	}
	b, _ := json.Marshal(rep)
	return b
}

// postReport posts body as node with token, and returns the answer's status and Retry-After.
func postReport(t *testing.T, hc *http.Client, ctl *controller, node, token string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ctl.url+"/api/v1/nodes/"+node+"/reports", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

// Eight reports of one node with bodies of 8 MiB, the budget of every report in flight, sent
// one byte and then nothing: two are read, six answered 503 at once, and another node's report
// is taken, 200. A Content-Length past 8 MiB is answered 413 from the headers.
func TestOneNodesSlowBodiesDoNotTurnOthersAway(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := closingClient(ctl)
	n1 := must[hqclient.Registration](t)(c.Register(context.Background(), "n1"))
	tok2, d2 := declared(t, c, ctl, "n2")
	slow := func(size int) *tls.Conn {
		conn := rawTLS(t, ctl)
		fmt.Fprintf(conn, "POST /api/v1/nodes/n1/reports HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", n1.Token, size)
		return conn
	}
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		conn := slow(8 << 20)
		wg.Go(func() {
			conn.SetReadDeadline(time.Now().Add(3 * time.Second))
			status := 0
			if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[http.StatusServiceUnavailable] != 6 || statuses[0] != 2 {
		t.Fatalf("n1's slow reports: %v, want 6 answered 503 and 2 still being read", statuses)
	}
	if status, _ := postReport(t, c.HTTP, ctl, "n2", tok2, reportOf(d2, false)); status != http.StatusOK {
		t.Fatalf("n2's report beside n1's slow ones: %d", status)
	}
	conn := slow(8<<20 + 1)
	conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("a body past 8 MiB was not answered from its headers: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a body past 8 MiB: %d, want 413", resp.StatusCode)
	}
}

// A node posting 100 reports a second, each one different, is answered 429 with Retry-After
// past its burst (HQ_NODE_REPORT_BURST, 20) and its rate (HQ_NODE_REPORT_RATE, 2 a second):
// over 3 s the database keeps at most the burst and the rate's reports, not 300.
func TestANodePostingFastIsHeldToItsRate(t *testing.T) {
	ctx := context.Background()
	ctl := startController(t, testdb.New(t))
	c := closingClient(ctl)
	tok, d := declared(t, c, ctl, "n1")
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: suiteTLS()}}
	bodies := [][]byte{reportOf(d, false), reportOf(d, true)}
	taken, throttled := 0, 0
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i := 0; time.Since(start) < 3*time.Second; i++ {
		<-tick.C
		switch status, after := postReport(t, hc, ctl, "n1", tok, bodies[i%2]); status {
		case http.StatusOK:
			taken++
		case http.StatusTooManyRequests:
			throttled++
			if n, err := strconv.Atoi(after); err != nil || n < 1 {
				t.Fatalf("429 with Retry-After %q", after)
			}
		default:
			t.Fatalf("report %d: %d", i, status)
		}
	}
	elapsed := time.Since(start).Seconds()
	if bound := 20 + int(2*elapsed) + 1; taken > bound || throttled < 100 {
		t.Fatalf("%d reports taken (at most %d), %d answered 429, in %.1fs", taken, bound, throttled, elapsed)
	}
	reports := must[[]hq.ReportView](t)(c.Reports(ctx, "n1", 1000))
	if len(reports) > taken {
		t.Fatalf("%d reports stored, more than the %d taken", len(reports), taken)
	}
	page := must[string](t)(c.Metrics(ctx))
	if !strings.Contains(page, fmt.Sprintf("\nhq_reports_throttled_total %d\n", throttled)) {
		t.Fatalf("/metrics does not count the %d throttled:\n%s", throttled, page)
	}
}

// Wrong bearer tokens from one address past HQ_AUTH_FAILURES (30 a minute) are answered 429
// with Retry-After, the operator's too from that address; every answer over TLS carries
// Strict-Transport-Security, and JSON answers X-Content-Type-Options: nosniff.
func TestGuessesAreBoundedAndAnswersHardened(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: suiteTLS()}}
	get := func(path, token string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", ctl.url+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, resp := range []*http.Response{get("/api/v1/status", adminToken), get("/healthz", ""), get("/login", "")} {
		if resp.Header.Get("Strict-Transport-Security") == "" {
			t.Fatalf("%s over TLS without Strict-Transport-Security: %v", resp.Request.URL.Path, resp.Header)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s without nosniff: %v", resp.Request.URL.Path, resp.Header)
		}
	}
	for i := range 30 {
		if resp := get("/api/v1/status", fmt.Sprintf("guess-%d", i)); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, resp.StatusCode)
		}
	}
	for _, token := range []string{"guess-30", adminToken} {
		resp := get("/api/v1/status", token)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("past 30 guesses: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}
