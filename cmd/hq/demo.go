package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/api"
	"github.com/meshhq/hq/hostd"
)

// demo runs a controller and three hosts on temporary roots, with modules that show a
// converged node, a node waiting on a take and a node with a stuck resource.
func demo(ctx context.Context, cfg api.Config, log *slog.Logger) error {
	dir, err := os.MkdirTemp("", "hq-demo-")
	if err != nil {
		return err
	}
	cfg.DB = filepath.Join(dir, "hq.db")
	if cfg.AdminToken == "" {
		cfg.AdminToken = rand.Text()
	}
	cfg.StuckAttempts = 3
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- api.Run(ctx, cfg, log.With("part", "hq"), func(addr string) { ready <- addr }) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		return err
	}
	base := "http://" + addr
	c := demoClient{base: base + "/api/v1", token: cfg.AdminToken}
	hosts, err := c.setUp(dir)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		go func() {
			if err := hostd.Run(ctx, h, log.With("part", "hostd", "node", h.Node)); err != nil {
				log.Error("hostd stopped", "node", h.Node, "err", err)
			}
		}()
	}
	fmt.Fprintf(os.Stderr, demoText, base, cfg.AdminToken, dir, cfg.DB)
	return <-errc
}

const demoText = `
hq demo: a controller at %[1]s and three hosts (web-1, edge-1, app-1) under %[3]s
  web-1   converges
  edge-1  holds route-proxy: a file was already there and the module is not taken
  app-1   has a resource whose validate always fails: failed, then stuck after 3 attempts

  export HQ_ADMIN_TOKEN=%[2]s
  curl -s -H "Authorization: Bearer $HQ_ADMIN_TOKEN" %[1]s/api/v1/status
  curl -s -H "Authorization: Bearer $HQ_ADMIN_TOKEN" %[1]s/api/v1/nodes/edge-1
  curl -s -X POST -H "Authorization: Bearer $HQ_ADMIN_TOKEN" %[1]s/api/v1/nodes/edge-1/assignments/route-proxy/take
  curl -s -H "Authorization: Bearer $HQ_ADMIN_TOKEN" %[1]s/api/v1/nodes/app-1/transitions
  sqlite3 %[4]s 'SELECT node, module, resource, from_state, to_state, at FROM transitions'
  status page: %[1]s/ (any user name, the token as password)

Ctrl-C stops it all.
`

type demoClient struct{ base, token string }

// setUp registers the demo's nodes, uploads and assigns its modules, and returns the hosts'
// configurations.
func (c demoClient) setUp(dir string) ([]hostd.Config, error) {
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
		if err := c.call("PUT", "/modules/"+name, map[string][]hq.Resource{"resources": rs}, nil); err != nil {
			return nil, err
		}
	}
	assign := map[string][]string{"web-1": {"motd", "web"}, "edge-1": {"motd", "route-proxy"}, "app-1": {"motd", "app"}}
	var hosts []hostd.Config
	for _, node := range []string{"web-1", "edge-1", "app-1"} {
		var reg struct{ Token string }
		if err := c.call("POST", "/nodes", map[string]string{"name": node}, &reg); err != nil {
			return nil, err
		}
		for _, m := range assign[node] {
			if err := c.call("PUT", "/nodes/"+node+"/assignments/"+m, map[string]bool{"taken": false}, nil); err != nil {
				return nil, err
			}
		}
		root := filepath.Join(dir, node, "root")
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
		hosts = append(hosts, hostd.Config{Controller: c.base[:len(c.base)-len("/api/v1")], Node: node, Token: reg.Token,
			Root: root, StateDir: filepath.Join(dir, node, "state"), Interval: 5 * time.Second, Wait: 30 * time.Second})
	}
	// What an earlier, rolled-back attempt left on edge-1: the host will hold it, not overwrite it.
	found := filepath.Join(dir, "edge-1", "root", "var/lib/route-proxy/ca.pem")
	if err := os.MkdirAll(filepath.Dir(found), 0o755); err != nil {
		return nil, err
	}
	return hosts, os.WriteFile(found, []byte("a CA left by an earlier attempt\n"), 0o644)
}

func (c demoClient) call(method, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var e struct{ Error hq.Error }
		json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, e.Error.Message)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
