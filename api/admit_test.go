package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
	for !slow.read.Load() {
		time.Sleep(time.Millisecond)
	}
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
