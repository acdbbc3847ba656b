package hostd

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A controller that holds as many long-polls as it will answers at once with Retry-After, and
// the poller waits before it asks again: as long as asked, at most its interval.
func TestThePollerWaitsWhenTheControllerHoldsNoMorePolls(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		min, max int64
	}{
		{time.Hour, 1, 4},               // waits about the second asked: a few polls in 1.5 s
		{100 * time.Millisecond, 8, 40}, // waits at most its interval: more
	} {
		var polls atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			polls.Add(1)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusNotModified)
		}))
		p := &poller{c: newClient([]string{srv.URL}, "web-1", "tok"), node: "web-1", wait: 30 * time.Second,
			interval: c.interval, log: slog.New(slog.DiscardHandler), out: make(chan incoming)}
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		p.run(ctx)
		cancel()
		srv.Close()
		if n := polls.Load(); n < c.min || n > c.max {
			t.Errorf("interval %s: %d polls in 1.5 s, want %d to %d", c.interval, n, c.min, c.max)
		}
	}
}
