package longpoll

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq/internal/wait"
)

// dialPoll opens a connection to the bed and sends one poll that waits 20 s.
func (b *bed) dialPoll(t *testing.T) net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(strings.TrimPrefix(b.url, "http://"), "https://")
	var c net.Conn
	var err error
	if strings.HasPrefix(b.url, "https://") {
		c, err = tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true})
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET /poll?after=0&wait=20s HTTP/1.1\r\nHost: h\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// reset closes c with a reset rather than a FIN, as a client killed or a flood does.
func reset(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	c.(*net.TCPConn).SetLinger(0)
	c.Close()
}

// A parked poll whose client closed or reset its connection leaves the lot at once, its
// connection closed, rather than holding its place and its file until its wait ends: over
// TCP and TLS, closed and reset.
func TestAPollWhoseClientWentAwayLeavesTheLot(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the lot watches parked connections with epoll, on Linux only")
	}
	for _, useTLS := range []bool{false, true} {
		for _, how := range []string{"close", "reset"} {
			t.Run(map[bool]string{false: "tcp", true: "tls"}[useTLS]+"/"+how, func(t *testing.T) {
				b := newBed(t, true, useTLS)
				var conns []net.Conn
				for range 10 {
					conns = append(conns, b.dialPoll(t))
				}
				wait.For(t, 5*time.Second, "10 polls parked", func() bool { return b.lot.Parked() == 10 })
				for _, c := range conns {
					if how == "reset" {
						reset(c)
					} else {
						c.Close()
					}
				}
				wait.For(t, 2*time.Second, "the polls leave the lot once their clients went away", func() bool { return b.lot.Parked() == 0 })
				// The lot still answers: a poll parked now is answered when the generation moves.
				c := b.dialPoll(t)
				wait.For(t, 5*time.Second, "a new poll parked", func() bool { return b.lot.Parked() == 1 })
				b.src.set(1)
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("the poll parked after: %v %v", resp, err)
				}
			})
		}
	}
}

// A key holds at most PerKey parked polls: a newer one takes the place of the oldest, which is
// answered at once (here 304 with Retry-After, as the bed answers ErrReplaced), its connection
// kept for the client's next request.
func TestANewerPollOfAKeyReplacesTheOldest(t *testing.T) {
	b := newBed(t, true, false)
	b.perKey.Store(2)
	var conns []net.Conn
	for i := range 5 {
		conns = append(conns, b.dialPoll(t))
		wait.For(t, 5*time.Second, "the poll parked", func() bool { return b.lot.Parked() == min(i+1, 2) })
	}
	for i, c := range conns[:3] {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != http.StatusNotModified || resp.Header.Get("Retry-After") != "30" || resp.Close {
			t.Fatalf("poll %d, replaced: %v %v", i, resp, err)
		}
	}
	if n := b.lot.Parked(); n != 2 {
		t.Fatalf("%d polls parked, want the newest 2", n)
	}
	b.src.set(1)
	for i, c := range conns[3:] {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("poll %d of the newest: %v %v", i+3, resp, err)
		}
	}
}
