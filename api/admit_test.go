package api

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meshhq/hq/internal/wait"
)

// blockingBody stands for a report still on the wire: it yields nothing until released.
type blockingBody struct {
	release chan struct{}
	read    atomic.Bool
}

func (b *blockingBody) Read(p []byte) (int, error) {
	b.read.Store(true)
	<-b.release
	return 0, io.EOF
}

func (b *blockingBody) Close() error { return nil }

// Past the bound of reports in flight a report is answered 503 with Retry-After before its
// body is read, and the bound frees as the reports in flight end.
func TestReportsPastTheBoundAreShedUnread(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	s := &Server{Store: f.store, AdminToken: admin, Instance: "t", Key: f.key, MaxWait: time.Second,
		Log: slog.New(slog.DiscardHandler), MaxReportsInFlight: 1, RetryAfter: 2}
	h := s.Handler()
	slow := &blockingBody{release: make(chan struct{})}
	first := make(chan int, 1)
	go func() {
		req := httptest.NewRequest("POST", "/api/v1/nodes/web-1/reports", slow)
		req.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		first <- w.Code
	}()
	wait.For(t, 5*time.Second, "the first report's body to be read", slow.read.Load)
	shed := &blockingBody{release: make(chan struct{})}
	close(shed.release)
	req := httptest.NewRequest("POST", "/api/v1/nodes/web-1/reports", shed)
	req.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	retry := w.Header().Get("Retry-After")
	if w.Code != http.StatusServiceUnavailable || (retry != "2" && retry != "3" && retry != "4") || shed.read.Load() {
		t.Fatalf("past the bound: %d, Retry-After %q, body read %v: %s", w.Code, retry, shed.read.Load(), w.Body)
	}
	if !strings.Contains(w.Body.String(), `"unavailable"`) || s.Shed() != 1 {
		t.Fatalf("shed answer %s, %d shed", w.Body, s.Shed())
	}
	close(slow.release)
	if code := <-first; code != http.StatusBadRequest { // its body was empty
		t.Fatalf("the report in flight answered %d", code)
	}
	req = httptest.NewRequest("POST", "/api/v1/nodes/web-1/reports", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code == http.StatusServiceUnavailable {
		t.Fatal("the bound did not free when the report in flight ended")
	}
}

// The bodies admitted at once are bounded in bytes too: a report that would pass the bound is
// turned away while others are in, and admitted once they are done; one that does not say its
// size counts as the largest a body may be.
func TestAdmissionBoundsBytes(t *testing.T) {
	a := newAdmission(10)
	a.maxBytes.Store(100 << 10)
	if !a.take(60 << 10) {
		t.Fatal("the first report was turned away")
	}
	if a.take(60 << 10) {
		t.Fatal("a report past the byte bound was admitted")
	}
	if a.take(-1) {
		t.Fatal("a report of unknown size was admitted under a bound smaller than a body")
	}
	a.release(60 << 10)
	if !a.take(60 << 10) {
		t.Fatal("the bound did not free")
	}
	if got := a.bytes.Load(); got != 60<<10 {
		t.Fatalf("%d bytes counted in flight, want %d", got, 60<<10)
	}
}

// A report turned away is turned away before its caller is checked, so that shedding costs no
// read of the database, and on the connection it came on: the next request reuses it rather
// than opening another.
func TestShedReportKeepsItsConnection(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	_, srv := oneReportAtATime(t, f)
	slow := &blockingBody{release: make(chan struct{})}
	var once sync.Once
	release := func() { once.Do(func() { close(slow.release) }) }
	defer release() // before the server closes, which waits for the report in flight
	first := make(chan error, 1)
	go func() {
		req, err := http.NewRequest("POST", srv.URL+"/api/v1/nodes/web-1/reports", slow)
		if err != nil {
			first <- err
			return
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultTransport.(*http.Transport).Clone().RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		first <- err
	}()
	wait.For(t, 5*time.Second, "the first report's body to be read", slow.read.Load)
	client := &http.Client{Transport: &http.Transport{}}
	post := func(token string) (*http.Response, bool) {
		t.Helper()
		reused := false
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		body := strings.NewReader(`{"results": [` + strings.Repeat(`{"module": "m", "resource": "r", "outcome": "applied"},`, 500) + `{}]}`)
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", srv.URL+"/api/v1/nodes/web-1/reports", body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, reused
	}
	if resp, _ := post("not-a-token"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a report past the bound with a wrong token: %d, want 503 before the token is checked", resp.StatusCode)
	}
	for i := range 3 {
		resp, reused := post(tok)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Connection") == "close" || !reused {
			t.Fatalf("shed report %d: %d, Connection %q, on the same connection %v", i, resp.StatusCode, resp.Header.Get("Connection"), reused)
		}
	}
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}

// A report past the bound is answered from its headers: a client that sends its headers and
// then stalls its body has its 503 at once, and a body that never comes closes the connection,
// so nothing sent later on it is read as a request.
func TestShedBeforeTheBodyArrives(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.node("web-1")
	s, srv := oneReportAtATime(t, f)
	post := fmt.Sprintf("POST /api/v1/nodes/web-1/reports HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n", tok)
	// The report in flight: its headers, and a body that does not come.
	held, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	io.WriteString(held, post)
	wait.For(t, 5*time.Second, "the first report to be admitted", func() bool { return len(s.reports.slots) == 1 })

	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, post)
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer before the body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("%d %v, want 503 with Retry-After", resp.StatusCode, resp.Header)
	}
	c.SetReadDeadline(time.Now().Add(shedDrainTimeout + 5*time.Second))
	if b, err := r.ReadByte(); err == nil {
		t.Fatalf("read %q after the 503, want the connection closed once its body did not come", b)
	}
}

// oneReportAtATime serves the fixture's store with room for one report in flight.
func oneReportAtATime(t *testing.T, f *fixture) (*Server, *httptest.Server) {
	s := &Server{Store: f.store, AdminToken: admin, Instance: "t", Key: f.key, MaxWait: time.Second,
		Log: slog.New(slog.DiscardHandler), MaxReportsInFlight: 1, RetryAfter: 2}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return s, srv
}
