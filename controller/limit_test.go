package controller

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/meshhq/hq/internal/wait"
)

// With a cap of two, a third connection is not served while two are open, and is served as
// soon as one of them closes.
func TestConnectionCap(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newLimitListener(inner, 2)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	t.Cleanup(func() {
		hs.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})

	type client struct {
		conn net.Conn
		r    *bufio.Reader
	}
	dial := func() client {
		t.Helper()
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return client{c, bufio.NewReader(c)}
	}
	get := func(c client, within time.Duration) error {
		t.Helper()
		if _, err := c.conn.Write([]byte("GET / HTTP/1.1\r\nHost: hq\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		c.conn.SetReadDeadline(time.Now().Add(within))
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	a, b := dial(), dial()
	for _, c := range []client{a, b} {
		if err := get(c, 5*time.Second); err != nil {
			t.Fatalf("one of the first two connections: %v", err)
		}
	}
	third := dial() // the kernel completes the handshake; the server does not accept it
	if _, err := third.conn.Write([]byte("GET / HTTP/1.1\r\nHost: hq\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	third.conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := third.r.Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the third connection was answered while two were open: %v", err)
	}
	a.conn.Close()
	third.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(third.r, nil)
	if err != nil {
		t.Fatalf("the third connection after one closed: %v", err)
	}
	resp.Body.Close()
	if err := get(b, 5*time.Second); err != nil {
		t.Fatalf("the second connection still served: %v", err)
	}
}

// Closing the listener ends an Accept that waits for a slot.
func TestLimitListenerCloseWhileFull(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := newLimitListener(inner, 1)
	c, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := ln.Accept(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ln.Accept(); done <- err }()
	wait.For(t, 5*time.Second, "an Accept waiting for a slot", acceptWaiting)
	ln.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Accept after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waits after Close")
	}
}

// acceptWaiting reports whether a goroutine waits in a limitListener's Accept for a slot.
func acceptWaiting() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, " [select") && strings.Contains(g, ".(*limitListener).Accept(") {
			return true
		}
	}
	return false
}

// The server outlasts the longest long-poll before it times out a write, and bounds idle
// connections and header size; the cap defaults to a 10,000-node fleet's long-polls and more.
func TestServerLimits(t *testing.T) {
	hs := httpServer(http.NotFoundHandler(), maxWait, context.Background())
	if hs.WriteTimeout <= maxWait || hs.ReadTimeout <= 0 || hs.ReadHeaderTimeout <= 0 || hs.IdleTimeout <= 0 {
		t.Fatalf("timeouts: read header %s, read %s, write %s, idle %s; want all set and write past %s",
			hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout, maxWait)
	}
	if hs.MaxHeaderBytes <= 0 || hs.MaxHeaderBytes > 1<<20 {
		t.Fatalf("MaxHeaderBytes %d", hs.MaxHeaderBytes)
	}
	var cfg Config
	t.Setenv("HQ_ADMIN_TOKEN", "x")
	if err := envconfig.Process("HQ", &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxConns != 50000 || cfg.Check() != nil {
		t.Fatalf("default HQ_MAX_CONNS %d (%v), want 50000", cfg.MaxConns, cfg.Check())
	}
	t.Setenv("HQ_MAX_CONNS", "0")
	envconfig.Process("HQ", &cfg)
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), "HQ_MAX_CONNS") {
		t.Fatalf("HQ_MAX_CONNS=0: %v", err)
	}
}
