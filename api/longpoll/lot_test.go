package longpoll

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// source is a generation and its bell, as a store keeps them for one key.
type source struct {
	mu    sync.Mutex
	gen   int64
	rings []func()
}

func (s *source) listen(ring func()) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rings = append(s.rings, ring)
	return func() {}
}

func (s *source) set(gen int64) {
	s.mu.Lock()
	s.gen = gen
	rings := s.rings
	s.rings = nil
	s.mu.Unlock()
	for _, r := range rings {
		r()
	}
}

func (s *source) generation(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, nil
}

// answer is what both paths answer: the generation as a body past after, 304 otherwise.
func answer(w http.ResponseWriter, after, gen int64, err error) {
	switch {
	case errors.Is(err, ErrReplaced):
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusNotModified)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case gen <= after:
		w.Header().Set("ETag", fmt.Sprintf(`"%d"`, gen))
		w.WriteHeader(http.StatusNotModified)
	default:
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "generation %d\n", gen)
	}
}

// bed serves GET /poll?after=N&wait=D two ways on the same source: through a lot, or, the
// standard path, waiting in its handler.
type bed struct {
	src *source
	url string
	lot *Lot
	// boom, when set, makes an answer composed in the lot panic.
	boom atomic.Bool
	// perKey is the Poll.PerKey the lot's polls are parked with.
	perKey atomic.Int32
}

func newBed(t *testing.T, lot, useTLS bool) *bed {
	t.Helper()
	b := &bed{src: &source{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var after int64
		fmt.Sscan(r.URL.Query().Get("after"), &after)
		wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
		if b.lot != nil && b.lot.Park(w, r, Poll{Key: "k", PerKey: int(b.perKey.Load()), After: after, Wait: wait, Listen: b.src.listen, Generation: b.src.generation,
			Answer: func(_ context.Context, w http.ResponseWriter, gen int64, err error) {
				if b.boom.Load() {
					panic("composing failed")
				}
				answer(w, after, gen, err)
			}}) {
			return
		}
		// The standard path: wait in the handler for the bell or the deadline.
		deadline := time.After(wait)
		for {
			rang := make(chan struct{})
			var once sync.Once
			b.src.listen(func() { once.Do(func() { close(rang) }) })
			gen, err := b.src.generation(r.Context())
			if err != nil || gen > after {
				answer(w, after, gen, err)
				return
			}
			select {
			case <-rang:
			case <-deadline:
				answer(w, after, gen, nil)
				return
			case <-r.Context().Done():
				return
			}
		}
	})
	srv := httptest.NewUnstartedServer(h)
	if lot {
		// Made before the server starts, so its handlers see it.
		b.lot = NewLot(srv.Listener.Addr(), 4)
	}
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	if lot {
		back := &http.Server{Handler: h}
		done := make(chan struct{})
		go func() { back.Serve(b.lot.Returns()); close(done) }()
		t.Cleanup(func() { b.lot.Close(); back.Close(); <-done })
	}
	b.url = srv.URL
	return b
}

// exchange writes raw on a new connection and reads every answer until the server closes it or
// nothing more comes for a while, with each answer's Date blanked.
func (b *bed) exchange(t *testing.T, raw string, during func()) string {
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
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during()
	}
	var out bytes.Buffer
	c.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
	io.Copy(&out, c)
	return regexp.MustCompile(`Date: [^\r]*\r\n`).ReplaceAllString(out.String(), "Date: -\r\n")
}

// parsed is what a client makes of raw answers: each one's status, headers in order, body.
func parsed(t *testing.T, raw string) string {
	t.Helper()
	r := bufio.NewReader(strings.NewReader(raw))
	var out strings.Builder
	for {
		if _, err := r.Peek(1); err == io.EOF {
			return out.String()
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("%v in %q", err, raw)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Header.Del("Date")
		keys := slices.Sorted(maps.Keys(resp.Header))
		fmt.Fprintf(&out, "%s %d close=%v\n", resp.Proto, resp.StatusCode, resp.Close)
		for _, k := range keys {
			fmt.Fprintf(&out, "%s: %q\n", k, resp.Header[k])
		}
		fmt.Fprintf(&out, "%q\n", body)
	}
}

// The lot frames its answers as net/http frames the same answers given by a handler: a 304 at
// the end of the wait, a 200 when the generation moves during it, HTTP/1.0 with and without
// keep-alive, Connection: close, over plain TCP and TLS.
func TestTheLotFramesAsNetHTTPDoes(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		for _, c := range []struct {
			name, raw string
			move      bool
		}{
			{"expires", "GET /poll?after=0&wait=50ms HTTP/1.1\r\nHost: h\r\n\r\n", false},
			{"moves", "GET /poll?after=0&wait=5s HTTP/1.1\r\nHost: h\r\n\r\n", true},
			{"close", "GET /poll?after=0&wait=50ms HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false},
			{"moves and close", "GET /poll?after=0&wait=5s HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", true},
			{"http/1.0", "GET /poll?after=0&wait=50ms HTTP/1.0\r\n\r\n", false},
			{"http/1.0 keep-alive", "GET /poll?after=0&wait=50ms HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", false},
		} {
			t.Run(fmt.Sprintf("%s tls=%v", c.name, useTLS), func(t *testing.T) {
				var got [2]string
				for i, lot := range []bool{false, true} {
					b := newBed(t, lot, useTLS)
					var during func()
					if c.move {
						during = func() { time.Sleep(100 * time.Millisecond); b.src.set(7) }
					}
					got[i] = parsed(t, b.exchange(t, c.raw, during))
					if lot && b.lot.Parked() != 0 {
						t.Fatalf("%d poll(s) still parked", b.lot.Parked())
					}
				}
				if got[0] == "" || got[0] != got[1] {
					t.Fatalf("the handler answered\n%q\nthe lot\n%q", got[0], got[1])
				}
			})
		}
	}
}

// A connection given back after its answer serves the client's next request, as a kept-alive
// connection does.
func TestAConnectionGivenBackServesTheNextRequest(t *testing.T) {
	b := newBed(t, true, false)
	c, err := net.Dial("tcp", strings.TrimPrefix(b.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for i := range 3 {
		fmt.Fprintf(c, "GET /poll?after=0&wait=30ms HTTP/1.1\r\nHost: h\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != http.StatusNotModified {
			t.Fatalf("request %d on one connection: %v %v", i, resp, err)
		}
	}
}

// A request pipelined behind a parked one is not lost into the parked connection: the poll is
// answered with Connection: close, and the client sends the rest again.
func TestAPipelinedRequestClosesTheConnection(t *testing.T) {
	b := newBed(t, true, false)
	out := b.exchange(t, "GET /poll?after=0&wait=50ms HTTP/1.1\r\nHost: h\r\n\r\nGET /poll?after=0&wait=50ms HTTP/1.1\r\nHost: h\r\n\r\n", nil)
	if strings.Count(out, "HTTP/1.1 304") != 1 || !strings.Contains(out, "Connection: close") {
		t.Fatalf("pipelined requests answered\n%q", out)
	}
}

// A client that goes away while its poll waits leaves nothing parked once its wait ends.
func TestAClientGoneMidWaitLeavesNothing(t *testing.T) {
	b := newBed(t, true, false)
	c, err := net.Dial("tcp", strings.TrimPrefix(b.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /poll?after=0&wait=100ms HTTP/1.1\r\nHost: h\r\n\r\n")
	deadline := time.Now().Add(5 * time.Second)
	for b.lot.Parked() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	c.Close()
	for b.lot.Parked() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := b.lot.Parked(); n != 0 {
		t.Fatalf("%d poll(s) parked after their client left and their wait ended", n)
	}
}

// A panic in composing a parked poll's answer is recovered: that poll is answered 500, and
// the lot goes on answering others.
func TestAPanicInAnAnswerIsRecovered(t *testing.T) {
	b := newBed(t, true, false)
	b.boom.Store(true)
	if out := b.exchange(t, "GET /poll?after=0&wait=30ms HTTP/1.1\r\nHost: h\r\n\r\n", nil); !strings.HasPrefix(out, "HTTP/1.1 500 ") {
		t.Fatalf("the panicking answer: %q, want 500", out)
	}
	b.boom.Store(false)
	if out := b.exchange(t, "GET /poll?after=0&wait=30ms HTTP/1.1\r\nHost: h\r\n\r\n", nil); !strings.HasPrefix(out, "HTTP/1.1 304 ") {
		t.Fatalf("a poll after the panic: %q, want 304", out)
	}
}

// Parkable is the lot's gate: a request it lets through has nothing after its headers.
func TestParkableRequestsHaveNoBody(t *testing.T) {
	cases := map[string]bool{
		"GET /d HTTP/1.1\r\nHost: h\r\n\r\n":                                        true,
		"GET /d HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n":                   true,
		"GET /d HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc":                false,
		"GET /d HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n": false,
		"GET /d HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n":                false,
		"GET /d HTTP/1.0\r\nHost: h\r\nConnection: keep-alive\r\n\r\n":              false,
	}
	for raw, want := range cases {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		if got := Parkable(r); got != want {
			t.Errorf("%q: parkable %v, want %v", raw, got, want)
		}
	}
}

// FuzzParkable holds the lot's gate on any request net/http reads: a request it would park has
// nothing after its headers, so what follows on the connection is the client's next request
// and nothing of this one.
func FuzzParkable(f *testing.F) {
	for _, s := range []string{
		"GET /api/v1/nodes/n/declaration?after=1&wait=30s HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET /d HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello",
		"GET /d HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"GET /d HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello",
		"GET /d HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
		"GET /d HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"GET /d HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n",
		"GET /d HTTP/1.1\r\nHost: h\r\n\r\nGET /healthz HTTP/1.1\r\nHost: h\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil || !Parkable(r) {
			return
		}
		if r.ProtoMajor != 1 || r.ProtoMinor != 1 {
			t.Fatalf("parkable %s", r.Proto)
		}
		body, err := io.ReadAll(r.Body)
		if err != nil || len(body) > 0 {
			t.Fatalf("a parkable request has a body: %q, %v", body, err)
		}
	})
}
