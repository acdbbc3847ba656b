package api

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/meshhq/hq/internal/wait"
)

// One node's long-polls wait two at a time, in the lot and in handlers alike: a third takes the
// oldest's place, and the oldest is answered at once, 304 with Retry-After, so that a node's
// token cannot take the controller's connections. Another node's poll still waits.
func TestANodeHoldsTwoPolls(t *testing.T) {
	for _, path := range []string{"lot", "handler"} {
		t.Run(path, func(t *testing.T) {
			f := setup(t)
			tok, other := f.node("web-1"), f.node("web-2")
			// HTTP/1.0 is never parked: it waits in its handler, as every poll does with
			// HQ_LONGPOLL=handler.
			proto := map[string]string{"lot": "HTTP/1.1", "handler": "HTTP/1.0"}[path]
			waiting := func() int {
				if path == "lot" {
					return f.lot.Parked()
				}
				return f.server.Waiting() - f.lot.Parked()
			}
			poll := func(node, token string) (net.Conn, *bufio.Reader) {
				c := f.dial()
				fmt.Fprintf(c, "GET /api/v1/nodes/%s/declaration?after=0&wait=30s %s\r\nHost: hq\r\nConnection: keep-alive\r\nAuthorization: Bearer %s\r\n\r\n", node, proto, token)
				return c, bufio.NewReader(c)
			}
			type conn struct {
				c net.Conn
				r *bufio.Reader
			}
			var polls []conn
			for i := range 5 {
				c, r := poll("web-1", tok)
				polls = append(polls, conn{c, r})
				if i < 2 {
					wait.For(t, 5*time.Second, "the poll to wait", func() bool { return waiting() == i+1 })
					continue
				}
				// The newest takes the place of the oldest, which is answered at once.
				p := polls[i-2]
				p.c.SetReadDeadline(time.Now().Add(5 * time.Second))
				resp, err := http.ReadResponse(p.r, nil)
				if err != nil {
					t.Fatalf("poll %d, replaced: %v", i-2, err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotModified || resp.Header.Get("Retry-After") != "30" || resp.Header.Get("ETag") != `"0"` {
					t.Fatalf("poll %d, replaced: %d %v", i-2, resp.StatusCode, resp.Header)
				}
			}
			wait.For(t, 5*time.Second, "two polls of the node to wait", func() bool { return waiting() == 2 })
			poll("web-2", other)
			wait.For(t, 5*time.Second, "the other node's poll to wait beside the two", func() bool { return waiting() == 3 })
		})
	}
}
