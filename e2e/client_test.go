package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/meshhq/hq"
)

const adminToken = "e2e-operator-token"

// client is a small operator client of the API.
type client struct {
	t testing.TB
	// bases are the API of each controller on the database: calls go to each in turn.
	bases []string
	mu    sync.Mutex
	calls int
}

// target is the base of the next call.
func (c *client) target() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	return c.bases[(c.calls-1)%len(c.bases)]
}

func newClient(t testing.TB, urls ...string) *client {
	c := &client{t: t}
	for _, u := range urls {
		c.bases = append(c.bases, u+"/api/v1")
	}
	return c
}

// call sends a request and decodes a 2xx answer into out; any other status fails the test.
func (c *client) call(method, path string, body, out any, headers ...string) {
	c.t.Helper()
	status, b := c.raw(method, path, body, headers...)
	if status/100 != 2 {
		c.t.Fatalf("%s %s: %d %s", method, path, status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

func (c *client) raw(method, path string, body any, headers ...string) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, c.target()+path, rd)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (c *client) register(node string) string {
	var out struct{ Token string }
	c.call("POST", "/nodes", map[string]string{"name": node}, &out)
	return out.Token
}

func (c *client) putModule(name string, rs ...hq.Resource) {
	c.t.Helper()
	c.call("PUT", "/modules/"+name, map[string][]hq.Resource{"resources": rs}, nil)
}

func (c *client) assign(node, module string, taken bool) int64 {
	c.t.Helper()
	var out struct{ Generation int64 }
	c.call("PUT", fmt.Sprintf("/nodes/%s/assignments/%s", node, module), map[string]bool{"taken": taken}, &out)
	return out.Generation
}

func (c *client) take(node, module string) int64 {
	c.t.Helper()
	var out struct{ Generation int64 }
	c.call("POST", fmt.Sprintf("/nodes/%s/assignments/%s/take", node, module), nil, &out)
	return out.Generation
}

func (c *client) unassign(node, module string) int64 {
	c.t.Helper()
	var out struct{ Generation int64 }
	c.call("DELETE", fmt.Sprintf("/nodes/%s/assignments/%s", node, module), nil, &out)
	return out.Generation
}

func (c *client) node(name string) hq.NodeView {
	c.t.Helper()
	var v hq.NodeView
	c.call("GET", "/nodes/"+name, nil, &v)
	return v
}

func (c *client) status() hq.MeshStatus {
	c.t.Helper()
	var st hq.MeshStatus
	c.call("GET", "/status", nil, &st)
	return st
}

func (c *client) transitions(node string) []hq.TransitionView {
	c.t.Helper()
	var out struct{ Transitions []hq.TransitionView }
	c.call("GET", "/nodes/"+node+"/transitions?limit=1000", nil, &out)
	return out.Transitions
}

func (c *client) sends(node string) []hq.SendView {
	c.t.Helper()
	var out struct{ Sends []hq.SendView }
	c.call("GET", "/nodes/"+node+"/sends?limit=1000", nil, &out)
	return out.Sends
}

// resource finds one resource in a node view.
func resourceOf(v hq.NodeView, module, name string) hq.ResourceView {
	for _, r := range v.Resources {
		if r.Module == module && r.Resource == name {
			return r
		}
	}
	return hq.ResourceView{}
}

// story lists the states a resource went through, oldest first.
func story(trs []hq.TransitionView, module, name string) []string {
	var out []string
	for i := len(trs) - 1; i >= 0; i-- {
		if trs[i].Module == module && trs[i].Resource == name {
			out = append(out, trs[i].To)
		}
	}
	return out
}
