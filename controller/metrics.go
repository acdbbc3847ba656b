package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/metrics"
)

// metricsListener wires /metrics into srv: served to the operator beside the API, or, with
// addr set, without auth on a listener of its own (for a scraper that holds no token), which it
// opens now, so a bad address fails at start. serve then serves it until ctx ends; it is nil
// when there is no listener of its own; closeLn closes the listener if serve never runs.
func metricsListener(srv *api.Server, store *db.Store, addr string, profile bool, log *slog.Logger) (serve func(ctx context.Context), closeLn func(), err error) {
	m := metrics.New(store, srv, log)
	srv.Reports = m
	if addr == "" {
		srv.Metrics = m.Handler()
		return nil, func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s (HQ_METRICS_ADDR): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	if profile {
		// net/http/pprof's handlers, on this listener only: the API's never serves them.
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: time.Minute}
	log.Info("hq metrics serving", "addr", ln.Addr().String())
	return func(ctx context.Context) {
		errc := make(chan error, 1)
		go func() { errc <- hs.Serve(ln) }()
		select {
		case err := <-errc:
			log.Error("serving metrics", "err", err)
			return
		case <-ctx.Done():
		}
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			log.Error("stopping the metrics listener", "err", err)
		}
		<-errc
	}, func() { ln.Close() }, nil
}
