package api

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/wait"
)

// dial opens a raw connection to the fixture's server, over TLS when it serves HTTPS.
func (f *fixture) dial() net.Conn {
	f.t.Helper()
	addr := f.srv.Listener.Addr().String()
	var c net.Conn
	var err error
	if f.srv.TLS != nil {
		c, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

// readAnswers reads every response on c until it closes or is quiet for quiet, and returns
// their statuses.
func readAnswers(t *testing.T, c net.Conn, quiet time.Duration) []int {
	t.Helper()
	r := bufio.NewReader(c)
	var got []int
	for {
		c.SetReadDeadline(time.Now().Add(quiet))
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return got
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode)
	}
}

// A long-poll whose request has a body is never parked: a body sent after the poll was taken
// over would otherwise be read as the connection's next request, and behind a proxy that
// pools connections its answer would go to another client. Each way of sending a body, on
// HTTP and on HTTPS.
func TestPollWithABodyIsNotParked(t *testing.T) {
	t.Parallel()
	for _, https := range []bool{false, true} {
		f := setupServer(t, https, db.Options{})
		tok := f.node("web-1")
		smuggled := "GET /healthz HTTP/1.1\r\nHost: hq\r\n\r\n"
		chunk := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(smuggled), smuggled)
		framings := map[string]struct{ header, body string }{
			"content-length": {fmt.Sprintf("Content-Length: %d\r\n", len(smuggled)), smuggled},
			"chunked":        {"Transfer-Encoding: chunked\r\n", chunk},
			"expect":         {fmt.Sprintf("Expect: 100-continue\r\nContent-Length: %d\r\n", len(smuggled)), smuggled},
		}
		for name, fr := range framings {
			t.Run(fmt.Sprintf("%s/https=%v", name, https), func(t *testing.T) {
				c := f.dial()
				fmt.Fprintf(c, "GET /api/v1/nodes/web-1/declaration?after=0&wait=500ms HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\n%s\r\n", tok, fr.header)
				// The body comes late, as the attack sends it: once the poll waits, where it would
				// be parked.
				wait.For(t, 5*time.Second, "the poll to wait", func() bool { return f.server.Waiting() == 1 })
				if _, err := io.WriteString(c, fr.body); err != nil {
					t.Fatal(err)
				}
				got := readAnswers(t, c, 2*time.Second)
				if len(got) != 1 || got[0] != http.StatusNotModified {
					t.Fatalf("answers %v, want one 304: the body was read as a request", got)
				}
				if n := f.lot.Parked(); n != 0 {
					t.Fatalf("%d polls parked", n)
				}
			})
		}
	}
}

// An HTTP/1.0 client that asks to keep its connection is answered as net/http answers it:
// with Connection: keep-alive, and its next request read on the same connection.
func TestHTTP10PollIsAnsweredAsNetHTTPDoes(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	c := f.dial()
	r := bufio.NewReader(c)
	for range 2 {
		fmt.Fprintf(c, "GET /api/v1/nodes/web-1/declaration?after=0&wait=100ms HTTP/1.0\r\nHost: hq\r\nConnection: keep-alive\r\nAuthorization: Bearer %s\r\n\r\n", tok)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified || resp.Header.Get("Connection") != "keep-alive" {
			t.Fatalf("%d %v, want 304 with Connection: keep-alive", resp.StatusCode, resp.Header)
		}
	}
}

// Clients that never read their answers hold no slot another node's answer needs: many polls
// of a node with a large declaration, none of them read, do not delay another node's answer.
func TestSlowReadersDoNotDelayOtherNodes(t *testing.T) {
	const readers = 20
	// As many polls of one node as the lot takes: so many clients that never read.
	f := setupWith(t, false, db.Options{}, func(s *Server) { s.PollsPerNode = readers })
	big, small := f.node("big"), f.node("small")
	content := strings.Repeat("x", 3<<20)
	mod := fmt.Sprintf(`{"resources":[{"name":"a","kind":"file","path":"/a","content":%q},{"name":"b","kind":"file","path":"/b","content":%q}]}`, content, content)
	f.want(f.do("PUT", "/api/v1/modules/large", admin, mod), 201)
	f.want(f.do("PUT", "/api/v1/modules/app", admin, appModule), 201)
	// More polls than the lot has slots, each on a connection whose receive buffer is small and
	// never read, so every answer's write blocks.
	dialer := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	for range readers {
		c, err := dialer.Dial("tcp", f.srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /api/v1/nodes/big/declaration?after=0&wait=30s HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\n\r\n", big)
	}
	c, r := f.rawPoll("small", small, "after=0&wait=30s")
	f.waitParked(readers + 1)
	f.want(f.do("PUT", "/api/v1/nodes/big/assignments/large", admin, nil), 200)
	// Let the large answers take what they can before the other node's generation moves.
	wait.For(t, 10*time.Second, "the large answers to leave the lot", func() bool { return f.lot.Parked() == 1 })
	f.want(f.do("PUT", "/api/v1/nodes/small/assignments/app", admin, nil), 200)
	moved := time.Now()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(moved)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"app"`)) {
		t.Fatalf("the other node's answer: %d %.200s", resp.StatusCode, body)
	}
	if took > time.Second {
		t.Fatalf("the other node was answered %s after its generation moved, behind readers that never read", took)
	}
}
