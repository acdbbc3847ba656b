package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/api/longpoll"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/teststore"
	"github.com/meshhq/hq/internal/wait"
	"github.com/meshhq/hq/webui"
)

// BenchmarkParkedPollMemory measures what a host's waiting long-poll costs the controller:
// the whole server (router, middleware, API) on a real store, polls parked by plain
// connections that send a request and read nothing. Every node of a fleet holds one, so
// these bytes times the nodes is most of the controller's memory at rest. heap-B/poll is
// the live heap after a collection (the client's side of each connection, a few hundred
// bytes, is in it too); stack-B/poll the goroutine stacks. "lot" is how the controller
// serves; "handler" is a poll waiting in its handler, as every one did before the lot.
func BenchmarkParkedPollMemory(b *testing.B) {
	b.Run("lot", func(b *testing.B) { benchmarkParkedPolls(b, true) })
	b.Run("handler", func(b *testing.B) { benchmarkParkedPolls(b, false) })
}

func benchmarkParkedPolls(b *testing.B, lot bool) {
	const polls = 2000
	ctx := context.Background()
	store := teststore.OpenAt(b, filepath.Join(b.TempDir(), "hq.db"), db.Options{})
	var err error
	tokens := make([]string, polls)
	gens := make([]int64, polls)
	for i := range polls {
		if tokens[i], gens[i], err = store.CreateNode(ctx, fmt.Sprintf("n%04d", i)); err != nil {
			b.Fatal(err)
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := &api.Server{Store: store, AdminToken: "admin", Instance: "bench", Log: log, MaxWait: maxWait, MaxReportsInFlight: 256, RetryAfter: 5}
	pages, err := webui.New(store, "admin", log)
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	base, endRequests := context.WithCancel(ctx)
	hs := httpServer(handler(srv, pages, log), maxWait, base)
	served := make(chan error, 2)
	go func() { served <- hs.Serve(ln) }()
	if lot {
		srv.Lot = longpoll.NewLot(ln.Addr(), answering)
		go func() { served <- hs.Serve(srv.Lot.Returns()) }()
		defer func() { <-served }()
	}
	defer func() {
		endRequests()
		if srv.Lot != nil {
			srv.Lot.Close()
		}
		hs.Close()
		<-served
	}()
	goroutines := runtime.NumGoroutine()
	parked := func() int {
		if lot {
			return srv.Lot.Parked()
		}
		return (runtime.NumGoroutine() - goroutines) / 2 // the handler, and the server's reader
	}

	for b.Loop() {
		before := memory()
		goroutines = before.goroutines
		conns := make([]net.Conn, polls)
		for i := range polls {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			conns[i] = c
			fmt.Fprintf(c, "GET /api/v1/nodes/n%04d/declaration?after=%d&wait=50s HTTP/1.1\r\nHost: hq\r\nAuthorization: Bearer %s\r\n\r\n", i, gens[i], tokens[i])
		}
		wait.For(b, 30*time.Second, fmt.Sprintf("%d parked polls", polls), func() bool { return parked() >= polls })
		after := memory()
		b.ReportMetric(float64(int64(after.heap)-int64(before.heap))/polls, "heap-B/poll")
		b.ReportMetric(float64(int64(after.stack)-int64(before.stack))/polls, "stack-B/poll")
		b.ReportMetric(float64(after.goroutines-before.goroutines)/polls, "goroutines/poll")
		for _, c := range conns {
			c.Close()
		}
		wait.For(b, 30*time.Second, "the closed polls' goroutines to end", func() bool {
			return runtime.NumGoroutine() <= before.goroutines+polls/10
		})
	}
}

type footprint struct {
	heap, stack uint64
	goroutines  int
}

// memory collects until the stacks have shrunk to what their goroutines use (a collection
// halves a stack at most once) and returns the live heap and the stacks.
func memory() footprint {
	for range 5 {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return footprint{heap: m.HeapAlloc, stack: m.StackInuse, goroutines: runtime.NumGoroutine()}
}
