// Package client is a small Go client of hq's operator API. The hq CLI, the demo and the
// end-to-end tests speak to the controller through it, so there is one place that knows the
// paths, the bodies and the error shape.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/meshhq/hq"
)

// Client calls one controller with the operator's token.
type Client struct {
	// Base is the controller's URL, e.g. http://127.0.0.1:8080, without /api/v1.
	Base  string
	Token string
	// HTTP is the client requests go through; nil is http.DefaultClient.
	HTTP *http.Client
	// UserAgent, when set, is every request's User-Agent: the hq CLI says hq-cli/VERSION, so
	// the audit log tells its calls from other API calls.
	UserAgent string
}

// New returns a client of the controller at base, authenticating with token.
func New(base, token string) *Client {
	return &Client{Base: strings.TrimRight(base, "/"), Token: token}
}

// Trusting is an HTTP client that verifies the controller's certificate against roots alone:
// for a controller whose certificate a private CA issued (HQ_CA, the demo's CA).
func Trusting(roots *x509.CertPool) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t}
}

// Error is an answer other than 2xx: the HTTP status and the API's coded error.
type Error struct {
	Status int
	// API is the error the controller answered with; empty when it sent none.
	API hq.Error
}

func (e *Error) Error() string {
	if e.API.Message == "" {
		return fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.API.Code, e.API.Message)
}

// StatusOf returns the HTTP status of an *Error in err's chain, or 0.
func StatusOf(err error) int {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Status
	}
	return 0
}

// Do sends one request to path under /api/v1 with body as JSON (none when nil) and decodes
// a 2xx answer into out (ignored when nil). Any other answer is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	return c.do(ctx, method, "/api/v1"+path, body, out)
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	for k, v := range headersFrom(ctx) {
		req.Header.Set(k, v)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		var wrapped struct{ Error hq.Error }
		if json.Unmarshal(b, &wrapped) == nil {
			e.API = wrapped.Error
		}
		return fmt.Errorf("%s %s: %w", method, path, e)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return nil
}

// Status is the mesh summary.
func (c *Client) Status(ctx context.Context) (hq.MeshStatus, error) {
	var st hq.MeshStatus
	return st, c.Do(ctx, "GET", "/status", nil, &st)
}

// NodeQuery filters and pages GET /nodes.
type NodeQuery struct {
	// Status is a node status, or "not-converged".
	Status string
	// Selector is a label selector, passed through as the server reads it.
	Selector string
	Limit    int
	Cursor   string
}

// NodeList is one page of nodes, with every node of the mesh counted by status.
type NodeList struct {
	Nodes  []hq.NodeView     `json:"nodes"`
	Next   string            `json:"next,omitempty"`
	Counts map[hq.Status]int `json:"counts"`
	Total  int               `json:"total"`
}

// Nodes returns one page of nodes.
func (c *Client) Nodes(ctx context.Context, q NodeQuery) (NodeList, error) {
	v := url.Values{}
	for k, s := range map[string]string{"status": q.Status, "selector": q.Selector, "cursor": q.Cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	path := "/nodes"
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	var l NodeList
	return l, c.Do(ctx, "GET", path, nil, &l)
}

// AllNodes follows the cursor through every page of the query.
func (c *Client) AllNodes(ctx context.Context, q NodeQuery) (NodeList, error) {
	var all NodeList
	for {
		page, err := c.Nodes(ctx, q)
		if err != nil {
			return all, err
		}
		all.Nodes = append(all.Nodes, page.Nodes...)
		all.Counts, all.Total = page.Counts, page.Total
		if page.Next == "" || page.Next == q.Cursor {
			return all, nil
		}
		q.Cursor = page.Next
	}
}

// Node is everything about one node.
func (c *Client) Node(ctx context.Context, name string) (hq.NodeView, error) {
	var v hq.NodeView
	return v, c.Do(ctx, "GET", "/nodes/"+url.PathEscape(name), nil, &v)
}

// Registration is a registered node; its token is shown this once.
type Registration struct {
	Name       string `json:"name"`
	Token      string `json:"token"`
	Generation int64  `json:"generation"`
}

// Register registers a node.
func (c *Client) Register(ctx context.Context, name string) (Registration, error) {
	var r Registration
	return r, c.Do(ctx, "POST", "/nodes", map[string]string{"name": name}, &r)
}

// DeleteNode forgets a node.
func (c *Client) DeleteNode(ctx context.Context, name string) error {
	return c.Do(ctx, "DELETE", "/nodes/"+url.PathEscape(name), nil, nil)
}

// SetLabels replaces a node's labels.
func (c *Client) SetLabels(ctx context.Context, node string, labels map[string]string) error {
	return c.Do(ctx, "PUT", "/nodes/"+url.PathEscape(node)+"/labels", map[string]map[string]string{"labels": labels}, nil)
}

// PutResult says what an upload did.
type PutResult struct {
	Revision int64 `json:"revision"`
	// Created is false when the upload was identical to the newest revision.
	Created     bool             `json:"created"`
	Generations map[string]int64 `json:"generations"`
	More        bool             `json:"more"`
}

// PutModule uploads a new revision of a module.
func (c *Client) PutModule(ctx context.Context, name string, resources []hq.Resource) (PutResult, error) {
	var r PutResult
	if resources == nil {
		resources = []hq.Resource{}
	}
	return r, c.Do(ctx, "PUT", "/modules/"+url.PathEscape(name), map[string][]hq.Resource{"resources": resources}, &r)
}

// PlanModule asks what uploading resources as module name would do; nothing is written.
func (c *Client) PlanModule(ctx context.Context, name string, resources []hq.Resource) (hq.ModulePlan, error) {
	var p hq.ModulePlan
	if resources == nil {
		resources = []hq.Resource{}
	}
	return p, c.Do(ctx, "PUT", "/modules/"+url.PathEscape(name)+"?dry_run=true", map[string][]hq.Resource{"resources": resources}, &p)
}

// Module is a module and its newest revision.
func (c *Client) Module(ctx context.Context, name string) (hq.ModuleView, error) {
	var m hq.ModuleView
	return m, c.Do(ctx, "GET", "/modules/"+url.PathEscape(name), nil, &m)
}

// Modules lists every module.
func (c *Client) Modules(ctx context.Context) ([]hq.ModuleView, error) {
	var out struct {
		Modules []hq.ModuleView `json:"modules"`
	}
	return out.Modules, c.Do(ctx, "GET", "/modules", nil, &out)
}

func assignmentPath(node, module string) string {
	return "/nodes/" + url.PathEscape(node) + "/assignments/" + url.PathEscape(module)
}

// generation is the answer of every assignment change.
type generation struct {
	Generation int64 `json:"generation"`
}

// Assign assigns a module to a node and returns the node's new generation.
func (c *Client) Assign(ctx context.Context, node, module string, taken bool) (int64, error) {
	var g generation
	return g.Generation, c.Do(ctx, "PUT", assignmentPath(node, module), map[string]bool{"taken": taken}, &g)
}

// Take lets an assigned module adopt what it finds on the node.
func (c *Client) Take(ctx context.Context, node, module string) (int64, error) {
	var g generation
	return g.Generation, c.Do(ctx, "POST", assignmentPath(node, module)+"/take", nil, &g)
}

// Unassign takes a module off a node.
func (c *Client) Unassign(ctx context.Context, node, module string) (int64, error) {
	var g generation
	return g.Generation, c.Do(ctx, "DELETE", assignmentPath(node, module), nil, &g)
}

// Retry starts a failed or stuck resource over.
func (c *Client) Retry(ctx context.Context, node, module, resource string) error {
	return c.Do(ctx, "POST", "/nodes/"+url.PathEscape(node)+"/resources/"+url.PathEscape(module)+"/"+url.PathEscape(resource)+"/retry", nil, nil)
}

func historyPath(node, what string, limit int) string {
	p := "/nodes/" + url.PathEscape(node) + "/" + what
	if limit > 0 {
		p += "?limit=" + strconv.Itoa(limit)
	}
	return p
}

// Reports is a node's report history, newest first; limit 0 is the server's default.
func (c *Client) Reports(ctx context.Context, node string, limit int) ([]hq.ReportView, error) {
	var out struct {
		Reports []hq.ReportView `json:"reports"`
	}
	return out.Reports, c.Do(ctx, "GET", historyPath(node, "reports", limit), nil, &out)
}

// Sends is a node's send history, newest first.
func (c *Client) Sends(ctx context.Context, node string, limit int) ([]hq.SendView, error) {
	var out struct {
		Sends []hq.SendView `json:"sends"`
	}
	return out.Sends, c.Do(ctx, "GET", historyPath(node, "sends", limit), nil, &out)
}

// Transitions is a node's state changes, newest first.
func (c *Client) Transitions(ctx context.Context, node string, limit int) ([]hq.TransitionView, error) {
	var out struct {
		Transitions []hq.TransitionView `json:"transitions"`
	}
	return out.Transitions, c.Do(ctx, "GET", historyPath(node, "transitions", limit), nil, &out)
}

// ControllerKey is the controller's public signing key, base64, as hostd pins it.
func (c *Client) ControllerKey(ctx context.Context) (string, error) {
	var out struct {
		Key string `json:"key"`
	}
	return out.Key, c.Do(ctx, "GET", "/controller-key", nil, &out)
}

// Metrics returns the controller's /metrics page, in the Prometheus text format.
func (c *Client) Metrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.Base+"/metrics", nil)
	if err != nil {
		return "", err
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /metrics: %w", &Error{Status: resp.StatusCode})
	}
	return string(b), nil
}
