package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/certs"
	"github.com/meshhq/hq/client"
	"github.com/meshhq/hq/controller"
)

// demo runs a controller and three hosts on temporary roots, with modules that show a
// converged node, a node waiting on a take and a node with a stuck resource. The hosts are
// real hostd processes; every process logs to a file in the demo's directory, so the
// instructions stay on screen. It serves HTTPS only, with a certificate from a CA made for the
// demo alone, as a mesh should run. It returns once every process it started has stopped.
func demo(ctx context.Context, cfg controller.Config) error {
	dir, err := os.MkdirTemp("", "hq-demo-")
	if err != nil {
		return err
	}
	// Removed last, once every process the demo started has stopped (the deferred wait below
	// runs first), whether it ended with Ctrl-C or failed to start.
	defer os.RemoveAll(dir)
	hostdBin, err := findHostd(dir)
	if err != nil {
		return err
	}
	logFile, err := os.Create(filepath.Join(dir, "hq.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	ca, err := demoTLS(dir, cfg.Addr)
	if err != nil {
		return err
	}
	cfg.DB = filepath.Join(dir, "hq.db")
	cfg.KeyFile = "" // the demo's own key, beside its own database, never the operator's
	cfg.SecretsKeyFile = ""
	cfg.TLSCert, cfg.TLSKey = ca.certFile, ca.keyFile
	if cfg.AdminToken == "" {
		cfg.AdminToken = rand.Text()
	}
	cfg.StuckAttempts = 3
	var hostsRunning sync.WaitGroup
	defer hostsRunning.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // before the wait above: it is what stops the hosts
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(logFile, nil))
	go func() { errc <- controller.Run(ctx, cfg, log, func(addr string) { ready <- addr }) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%w: set HQ_ADDR to a free address, e.g. HQ_ADDR=127.0.0.1:8081 hq demo", err)
		}
		return err
	}
	base := demoURL(addr)
	c := client.New(base, cfg.AdminToken)
	c.HTTP = client.Trusting(ca.roots)
	hosts, err := setUpDemo(ctx, c, dir)
	if err == nil {
		err = startHosts(ctx, &hostsRunning, hostdBin, base, ca.caFile, controller.KeyPath(cfg.DB), hosts)
	}
	if err != nil {
		cancel()
		<-errc
		return err
	}
	fmt.Fprintf(os.Stderr, demoText, base, cfg.AdminToken, dir, cfg.DB, ca.caFile)
	return <-errc
}

// demoCA is the demo's TLS: the files of its CA and of the controller's certificate, and
// the CA as a pool for the demo's own calls.
type demoCA struct {
	caFile, certFile, keyFile string
	roots                     *x509.CertPool
}

// demoTLS makes a throwaway CA and a certificate for the controller on the loopback address
// (and on addr's host, when HQ_ADDR names one), and writes them into dir. The CA's key is
// never written: once the demo ends, nobody can issue a certificate its hosts would trust.
func demoTLS(dir, addr string) (demoCA, error) {
	ca, err := certs.NewCA("hq demo CA", 30*24*time.Hour)
	if err != nil {
		return demoCA{}, err
	}
	spec := certs.Spec{Name: "hq demo", IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNS: []string{"localhost"}}
	if host, _, err := net.SplitHostPort(addr); err == nil && host != "" && host != "localhost" {
		if ip := net.ParseIP(host); ip == nil {
			spec.DNS = append(spec.DNS, host)
		} else if !ip.IsUnspecified() && !ip.IsLoopback() {
			spec.IPs = append(spec.IPs, ip)
		}
	}
	pair, err := ca.Issue(spec)
	if err != nil {
		return demoCA{}, err
	}
	d := demoCA{caFile: filepath.Join(dir, "ca.pem"), certFile: filepath.Join(dir, "hq.pem"), keyFile: filepath.Join(dir, "hq.key"), roots: ca.Pool()}
	if err := ca.WriteCert(d.caFile); err != nil {
		return demoCA{}, err
	}
	return d, pair.Write(d.certFile, d.keyFile)
}

// demoURL is the controller's URL from the address it listens on: one that listens on every
// address is reached on the loopback one, which its certificate names.
func demoURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsUnspecified() {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	return "https://" + addr
}

// findHostd finds the hostd binary beside this one or on PATH; from a source checkout (go run)
// it builds one into dir.
func findHostd(dir string) (string, error) {
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "hostd"); isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("hostd"); err == nil {
		return p, nil
	}
	out := filepath.Join(dir, "hostd")
	build := exec.Command("go", "build", "-o", out, "github.com/meshhq/hq/cmd/hostd")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("hostd is neither beside hq nor on PATH, and building it failed (%w): build it with go build ./cmd/hostd", err)
	}
	return out, nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// demoHost is one host of the demo: where it lives and its token.
type demoHost struct {
	node, token, dir string
}

// startHosts starts one hostd process per host, each stopped with SIGTERM when ctx ends and
// waited for by running; the controller's key and the CA that vouches for its certificate are
// handed to them, as an operator would provision them.
func startHosts(ctx context.Context, running *sync.WaitGroup, bin, base, caFile, keyPath string, hosts []demoHost) error {
	key, err := controller.LoadOrCreateKeys(keyPath)
	if err != nil {
		return err
	}
	pub := base64.StdEncoding.EncodeToString(key.Public())
	for _, h := range hosts {
		logFile, err := os.Create(filepath.Join(h.dir, "hostd.log"))
		if err != nil {
			return err
		}
		// The demo leaves nothing running behind it: its hosts stop their services when they stop.
		cmd := exec.CommandContext(ctx, bin, "run", "--stop-services-on-exit")
		cmd.Env = append(os.Environ(), "HOSTD_CONTROLLER="+base, "HOSTD_NODE="+h.node, "HOSTD_TOKEN="+h.token,
			"HOSTD_CONTROLLER_KEY="+pub, "HOSTD_CA="+caFile, "HOSTD_ROOT="+filepath.Join(h.dir, "root"),
			"HOSTD_STATE_DIR="+filepath.Join(h.dir, "state"), "HOSTD_INTERVAL=5s")
		cmd.Stdout, cmd.Stderr = logFile, logFile
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 15 * time.Second
		if err := cmd.Start(); err != nil {
			logFile.Close()
			return fmt.Errorf("start hostd for %s: %w", h.node, err)
		}
		running.Go(func() {
			cmd.Wait()
			logFile.Close()
		})
	}
	return nil
}

const demoText = `
hq demo: a controller at %[1]s and three hostd processes (web-1, edge-1, app-1) under %[3]s,
each logging to its own file there (hq.log, web-1/hostd.log, ...)
  web-1   converges
  edge-1  holds route-proxy: a file was already there and the module is not taken
  app-1   has a resource whose validate always fails: failed, then stuck after 3 attempts

It serves HTTPS only, with a certificate from a CA made for this demo alone (%[5]s):
the hosts trust it through HOSTD_CA, the CLI through HQ_CA, curl through CURL_CA_BUNDLE.
In another shell, this line makes README's examples work against the demo as printed:

  export HQ_URL=%[1]s HQ_CA=%[5]s CURL_CA_BUNDLE=%[5]s HQ_ADMIN_TOKEN=%[2]s

  curl -s -H "Authorization: Bearer $HQ_ADMIN_TOKEN" $HQ_URL/api/v1/status
  curl -s -H "Authorization: Bearer $HQ_ADMIN_TOKEN" $HQ_URL/api/v1/nodes/edge-1
  curl -s -H "Authorization: Bearer $HQ_ADMIN_TOKEN" -X POST $HQ_URL/api/v1/nodes/edge-1/assignments/route-proxy/take
  curl -s -H "Authorization: Bearer $HQ_ADMIN_TOKEN" $HQ_URL/api/v1/nodes/app-1/transitions
  sqlite3 %[4]s 'SELECT node, module, resource, from_state, to_state, at FROM transitions'

  the same with the CLI (hq, or go run ./cmd/hq from the source tree):
  hq status
  hq node edge-1
  hq take edge-1 route-proxy

  status page: %[1]s/ (any user name, the token as password; the browser does not know the
  demo's CA: import %[5]s, or accept its warning for this address)

Ctrl-C stops it all, and removes %[3]s.
`

// setUpDemo registers the demo's nodes, uploads and assigns its modules, and returns the hosts'
// configurations.
func setUpDemo(ctx context.Context, c *client.Client, dir string) ([]demoHost, error) {
	modules := map[string][]hq.Resource{
		"motd": {{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "managed by hq\n"}},
		"web": {
			{Name: "dir", Kind: hq.KindDirectory, Path: "/srv/web"},
			{Name: "index", Kind: hq.KindFile, Path: "/srv/web/index.html", Content: "<h1>hello</h1>\n"},
			{Name: "current", Kind: hq.KindSymlink, Path: "/srv/current", Target: "/srv/web"},
			{Name: "server", Kind: hq.KindService, Command: []string{"/bin/sleep", "infinity"}, RestartOn: []string{"index"}},
		},
		"route-proxy": {
			{Name: "ca", Kind: hq.KindFile, Path: "/var/lib/route-proxy/ca.pem", Content: "declared CA\n"},
			{Name: "proxy", Kind: hq.KindService, Command: []string{"/bin/sleep", "infinity"}, RestartOn: []string{"ca"}},
		},
		"app": {
			{Name: "config", Kind: hq.KindFile, Path: "/etc/app/config", Content: "broken = true\n", Validate: []string{"/bin/false", "{path}"}},
			{Name: "migrate", Kind: hq.KindAction, Command: []string{"/bin/true"}},
		},
	}
	for name, rs := range modules {
		if _, err := c.PutModule(ctx, name, rs); err != nil {
			return nil, err
		}
	}
	assign := map[string][]string{"web-1": {"motd", "web"}, "edge-1": {"motd", "route-proxy"}, "app-1": {"motd", "app"}}
	var hosts []demoHost
	for _, node := range []string{"web-1", "edge-1", "app-1"} {
		reg, err := c.Register(ctx, node)
		if err != nil {
			return nil, err
		}
		for _, m := range assign[node] {
			if _, err := c.Assign(ctx, node, m, false); err != nil {
				return nil, err
			}
		}
		root := filepath.Join(dir, node, "root")
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
		hosts = append(hosts, demoHost{node: node, token: reg.Token, dir: filepath.Join(dir, node)})
	}
	// What an earlier, rolled-back attempt left on edge-1: the host will hold it, not overwrite it.
	found := filepath.Join(dir, "edge-1", "root", "var/lib/route-proxy/ca.pem")
	if err := os.MkdirAll(filepath.Dir(found), 0o755); err != nil {
		return nil, err
	}
	return hosts, os.WriteFile(found, []byte("a CA left by an earlier attempt\n"), 0o644)
}
