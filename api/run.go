package api

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/webui"
)

// Config is the controller's configuration, read from the environment.
type Config struct {
	Addr          string        `envconfig:"ADDR" default:"127.0.0.1:8080"`
	DB            string        `envconfig:"DB" default:"./hq.db"`
	AdminToken    string        `envconfig:"ADMIN_TOKEN"`
	StuckAttempts int           `envconfig:"STUCK_ATTEMPTS" default:"5"`
	StuckAfter    time.Duration `envconfig:"STUCK_AFTER" default:"30m"`
	SilentAfter   time.Duration `envconfig:"SILENT_AFTER" default:"3m"`
}

// Run serves the controller until ctx ends, then shuts down gracefully. It listens before it
// serves, so a bad address fails at once; ready, if set, is called with the bound address.
func Run(ctx context.Context, cfg Config, log *slog.Logger, ready func(addr string)) error {
	if cfg.AdminToken == "" {
		return errors.New("HQ_ADMIN_TOKEN is required: operators authenticate with it")
	}
	if cfg.StuckAttempts < 1 {
		return errors.New("HQ_STUCK_ATTEMPTS must be at least 1")
	}
	store, err := db.Open(ctx, cfg.DB)
	if err != nil {
		return err
	}
	defer store.Close()
	store.StuckAttempts, store.StuckAfter, store.SilentAfter = cfg.StuckAttempts, cfg.StuckAfter, cfg.SilentAfter
	key, err := LoadOrCreateKey(filepath.Join(filepath.Dir(cfg.DB), filepath.Base(cfg.DB)+".key"))
	if err != nil {
		return err
	}
	srv := &Server{Store: store, AdminToken: cfg.AdminToken, Instance: instanceName(), Key: key, Log: log, MaxWait: 60 * time.Second}
	if srv.Pages, err = webui.New(store, cfg.AdminToken, log); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	// Requests live in a context of their own, ended at shutdown so long-polls return at once.
	base, endRequests := context.WithCancel(context.Background())
	defer endRequests()
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		BaseContext: func(net.Listener) context.Context { return base }}
	log.Info("hq serving", "addr", ln.Addr().String(), "db", cfg.DB, "instance", srv.Instance)
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("hq shutting down")
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	endRequests()
	return hs.Shutdown(shut)
}

// instanceName names this process in the sends it records: host, pid and a random suffix, so
// two controllers on one machine, or one restarted, are told apart.
func instanceName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "hq"
	}
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), rand.Text()[:6])
}
