package api

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/wait"
)

// rawPoll sends a long-poll on a connection of its own and returns it with its reader, so a
// test sees what is written on the wire and can send the next request on it.
func (f *fixture) rawPoll(node, token, query string) (net.Conn, *bufio.Reader) {
	f.t.Helper()
	c, err := net.Dial("tcp", f.srv.Listener.Addr().String())
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /api/v1/nodes/%s/declaration?%s HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\n\r\n", node, query, token)
	return c, bufio.NewReader(c)
}

func (f *fixture) waitParked(n int) {
	f.t.Helper()
	wait.For(f.t, 10*time.Second, fmt.Sprintf("%d parked poll(s)", n), func() bool { return f.lot.Parked() == n })
}

// Waiting polls hold no goroutine; a change answers its node's poll alone, with the
// declaration, and the wait's end answers the others 304 with the generation.
func TestParkedPollsHoldNoGoroutineAndAnswer(t *testing.T) {
	f := setup(t)
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	const n = 40
	tokens := make([]string, n)
	for i := range n {
		tokens[i] = f.node(fmt.Sprintf("web-%d", i))
	}
	before := runtime.NumGoroutine()
	type poll struct {
		c net.Conn
		r *bufio.Reader
	}
	polls := make([]poll, n)
	for i := range n {
		c, r := f.rawPoll(fmt.Sprintf("web-%d", i), tokens[i], "after=0&wait=2s")
		polls[i] = poll{c, r}
	}
	f.waitParked(n)
	if grown := runtime.NumGoroutine() - before; grown >= n/2 {
		t.Fatalf("%d parked polls hold %d goroutines", n, grown)
	}

	f.want(f.do("PUT", "/api/v1/nodes/web-7/assignments/app", admin, nil), 200)
	polls[7].c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(polls[7].r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var d hq.Declaration
	if resp.StatusCode != 200 || resp.Header.Get("ETag") != `"1"` || json.Unmarshal(body, &d) != nil || d.Generation != 1 || len(d.Modules) != 1 || d.Signature == "" {
		t.Fatalf("the changed node's poll: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if got := f.lot.Parked(); got != n-1 {
		t.Fatalf("%d parked after one node's change, want %d", got, n-1)
	}
	for i, p := range polls {
		if i == 7 {
			continue
		}
		p.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(p.r, nil)
		if err != nil {
			t.Fatalf("web-%d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified || resp.Header.Get("ETag") != `"0"` {
			t.Fatalf("web-%d: %d %v, want 304 with ETag \"0\"", i, resp.StatusCode, resp.Header)
		}
	}
	f.waitParked(0)
}

// An answered poll's connection goes back to the server: the host's next request is read on
// it, as on any kept-alive connection.
func TestAnsweredPollKeepsItsConnection(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	var conns []net.Conn
	for range 3 {
		var got net.Conn
		req, err := http.NewRequest("GET", f.srv.URL+"/api/v1/nodes/web-1/declaration?after=0&wait=50ms", nil)
		if err != nil {
			t.Fatal(err)
		}
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i.Conn }}))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified || resp.Header.Get("Date") == "" {
			t.Fatalf("poll: %d %v", resp.StatusCode, resp.Header)
		}
		conns = append(conns, got)
	}
	if conns[0] != conns[1] || conns[1] != conns[2] {
		t.Fatal("each poll came on a new connection: the answered ones were not kept")
	}
	// A client that asks for the connection to be closed has it closed.
	c, err := net.Dial("tcp", f.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /api/v1/nodes/web-1/declaration?after=0&wait=50ms HTTP/1.1\r\nHost: hq\r\nConnection: close\r\nAuthorization: Bearer %s\r\n\r\n", tok)
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil || resp.StatusCode != http.StatusNotModified || !resp.Close {
		t.Fatalf("poll with Connection: close: %v %v", resp, err)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("after the answer: %v, want the connection closed", err)
	}
}

// A bell that rings for a generation still not past the poll's (a host that knows a newer
// one, after a restore) parks the poll again; it is answered when its wait ends.
func TestPollParkedAgainWhenTheChangeIsNotNewEnough(t *testing.T) {
	f := setup(t)
	tok := f.node("web-1")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	c, r := f.rawPoll("web-1", tok, "after=5&wait=1s")
	f.waitParked(1)
	start := time.Now()
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotModified || resp.Header.Get("ETag") != `"1"` {
		t.Fatalf("%d %v, want 304 with ETag \"1\"", resp.StatusCode, resp.Header)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Fatalf("answered %s after a change that was not past its generation", waited)
	}
}

// Closing the lot closes the parked connections: their hosts poll again.
func TestLotCloseClosesParkedPolls(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	c, r := f.rawPoll("web-1", tok, "after=0&wait=30s")
	f.waitParked(1)
	f.lot.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := r.ReadString('\n'); err != io.EOF || strings.TrimSpace(b) != "" {
		t.Fatalf("read %q, %v; want the connection closed with nothing written", b, err)
	}
}

// Past MaxPolls a poll does not wait: it is answered at once, 304 with Retry-After when
// nothing is newer and the declaration when something is, and counted; the polls already
// waiting go on waiting.
func TestPollsPastMaxPollsAreAnsweredAtOnce(t *testing.T) {
	f := setup(t)
	f.server.MaxPolls = 1
	one, two := f.node("web-1"), f.node("web-2")
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	got := make(chan response, 1)
	go func() { got <- f.do("GET", "/api/v1/nodes/web-1/declaration?after=0&wait=5s", one, nil) }()
	wait.For(t, 5*time.Second, "the first long-poll to wait", func() bool { return f.server.Waiting() == 1 })
	start := time.Now()
	r := f.want(f.do("GET", "/api/v1/nodes/web-2/declaration?after=0&wait=5s", two, nil), 304)
	if time.Since(start) > 2*time.Second || r.header.Get("Retry-After") != "30" || r.header.Get("ETag") != `"0"` {
		t.Fatalf("the poll past the bound: %s later, Retry-After %q, ETag %q", time.Since(start), r.header.Get("Retry-After"), r.header.Get("ETag"))
	}
	f.want(f.do("PUT", "/api/v1/nodes/web-2/assignments/app", admin, nil), 200)
	r = f.want(f.do("GET", "/api/v1/nodes/web-2/declaration?after=0&wait=5s", two, nil), 200)
	var d hq.Declaration
	r.json(t, &d)
	if d.Generation != 1 || r.header.Get("Retry-After") != "30" {
		t.Fatalf("a poll past the bound with a newer declaration: generation %d, Retry-After %q", d.Generation, r.header.Get("Retry-After"))
	}
	if n := f.server.Deferred(); n != 2 {
		t.Fatalf("%d polls counted as answered at once, want 2", n)
	}
	if n := f.server.Polling(); n != 1 {
		t.Fatalf("%d hosts counted as polling, want web-2 alone", n)
	}
	if f.server.Waiting() != 1 {
		t.Fatal("the first poll stopped waiting")
	}
	f.want(f.do("PUT", "/api/v1/nodes/web-1/assignments/app", admin, nil), 200)
	f.want(<-got, 200)
	// With room again, web-2's next poll waits, and it no longer counts as polling.
	go func() { got <- f.do("GET", "/api/v1/nodes/web-2/declaration?after=1&wait=5s", two, nil) }()
	wait.For(t, 5*time.Second, "web-2's long-poll to wait", func() bool { return f.server.Waiting() == 1 })
	if n := f.server.Polling(); n != 0 {
		t.Fatalf("%d hosts counted as polling once web-2 holds a poll, want 0", n)
	}
	f.want(<-got, 304)
}
