// Package loadgen simulates hosts against a real hq controller over HTTP, exactly as hostd
// speaks to it: register, long-poll the declaration, report a result for every declared
// resource. cmd/hq-loadgen drives a fleet of them through timed phases; the end-to-end crash
// campaigns use the same hosts.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/client/node"
)

// NewTransport returns a transport that keeps conns idle connections to the controller, so
// that a fleet of simulated hosts does not open a connection per request. Each host holds a
// long-poll and posts reports, so conns should be about twice the number of hosts.
func NewTransport(conns int) *http.Transport {
	return &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		// Idle connections go before the controller closes them (after 5 s), as hostd's do, but
		// with a wider margin than hostd's 4 s: one process runs the whole fleet on cores it
		// shares with the controller, so under load its timers run late, and a host that sends
		// on a connection the controller has just closed gets no answer.
		IdleConnTimeout:    2 * time.Second,
		DisableCompression: true,
	}
}

// Call is what one request did: its status (0 when no answer came), how long it took, and the
// Retry-After the controller asked for, if any. It is the node client's, which hostd speaks
// through too.
type Call = node.Call

// Body is a report's body in parts (node.Body): the shared results are not copied.
type Body = node.Body

// Observer is told about every request a host makes; it must be safe for concurrent use.
type Observer func(kind string, c Call)

// Host is one simulated node: the node client hostd speaks through, and the last declaration
// the host received. Its Declaration is the client's; its Report retries, and PostReport
// posts once.
type Host struct {
	*node.Client

	mu   sync.Mutex
	decl *hq.Declaration

	// answeredAt is when a controller last answered the host (Unix nanoseconds) and answeredBy
	// its place in bases; acks counts the reports acknowledged with 200.
	answeredAt, answeredBy, acks atomic.Int64
}

// NewHost returns a host for a registered node of the controller at base (http://addr),
// sending through client; obs may be nil.
func NewHost(base, name, token string, client *http.Client, obs Observer) *Host {
	return NewHostOf([]string{base}, 0, name, token, client, obs)
}

// NewHostOf returns a host that speaks to bases[first] and, when a request gets no answer at
// all, turns to the next of bases, as hostd does with the controllers it is given.
func NewHostOf(bases []string, first int, name, token string, client *http.Client, obs Observer) *Host {
	h := &Host{Client: node.New(bases, first, name, token, client)}
	h.Observe = func(kind string, c Call) {
		if c.Status != 0 {
			h.answeredBy.Store(int64(c.Controller))
			h.answeredAt.Store(time.Now().UnixNano())
		}
		if obs != nil {
			obs(kind, c)
		}
	}
	return h
}

// Acks is how many of the host's reports were acknowledged with 200.
func (h *Host) Acks() int64 { return h.acks.Load() }

// Answered says when a controller last answered the host and which (its place in the list);
// a zero time when none has.
func (h *Host) Answered() (time.Time, int) {
	at := h.answeredAt.Load()
	if at == 0 {
		return time.Time{}, 0
	}
	return time.Unix(0, at), int(h.answeredBy.Load())
}

// Current returns the last declaration the host took in, or nil.
func (h *Host) Current() *hq.Declaration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.decl
}

// SetCurrent records d as the declaration the host has applied.
func (h *Host) SetCurrent(d *hq.Declaration) {
	h.mu.Lock()
	h.decl = d
	h.mu.Unlock()
}

// PostReport posts one report body once and decodes a 200 answer.
func (h *Host) PostReport(ctx context.Context, body Body) (hq.ReportResponse, Call) {
	rr, c := h.Client.Report(ctx, body)
	if c.Err == nil && c.Status == http.StatusOK {
		h.acks.Add(1)
	}
	return rr, c
}

// Retry says how a host retries a report that was not acknowledged.
type Retry struct {
	// Unreachable is the pause after a request that got no answer (the controller is down or
	// restarting); 503 waits for the Retry-After the controller sent, or Shed without one.
	Unreachable time.Duration
	Shed        time.Duration
}

// Report posts body until the controller acknowledges it with 200 or ctx ends, waiting as the
// controller asks between attempts: Retry-After on a 503 or a 429, r.Unreachable when nothing
// answered. Any other status is final. It returns the last answer and how many attempts were
// made.
func (h *Host) Report(ctx context.Context, body Body, r Retry) (hq.ReportResponse, Call, int) {
	for attempt := 1; ; attempt++ {
		rr, c := h.PostReport(ctx, body)
		var wait time.Duration
		switch {
		case c.Err == nil && c.Status == http.StatusOK:
			return rr, c, attempt
		case c.Err != nil:
			wait = r.Unreachable
		case c.Status == http.StatusServiceUnavailable || c.Status == http.StatusTooManyRequests:
			// Shed, or its node over HQ_NODE_REPORT_RATE: as hostd does, after Retry-After.
			wait = c.RetryAfter
			if wait == 0 {
				wait = r.Shed
			}
		default:
			return rr, c, attempt
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return rr, c, attempt
		case <-t.C:
		}
	}
}

// ReportBody encodes a report answering d with the given results, already encoded as a JSON
// array: the results of a fleet are the same bytes for every node, so they are encoded once,
// and the body holds them rather than a copy.
func ReportBody(d *hq.Declaration, results []byte, started, finished time.Time) Body {
	rep := hq.Report{StartedAt: started, FinishedAt: finished}
	if d != nil {
		rep.SendID, rep.Generation, rep.Digest, rep.Signature = d.SendID, d.Generation, d.Digest, d.Signature
	}
	head, err := json.Marshal(rep)
	if err != nil {
		panic("loadgen: a report does not marshal: " + err.Error())
	}
	// The header ends with "results":null}; the results go in place of the null.
	return Body{bytes.TrimSuffix(head, []byte("null}")), results, closeReport}
}

var closeReport = []byte("}")

// Results encodes one result per resource of d: every one applied, changed when changed says
// so (nil: none changed). A declaration with nothing in it gives [].
func Results(d *hq.Declaration, changed func(module string, r hq.Resource) bool) []byte {
	rs := make([]hq.Result, 0, d.ResourceCount())
	for _, m := range d.Modules {
		for _, r := range m.Resources {
			rs = append(rs, hq.Result{Module: m.Name, Resource: r.Name, Outcome: hq.StateApplied, Attempted: true,
				Changed: changed != nil && changed(m.Name, r)})
		}
	}
	b, err := json.Marshal(rs)
	if err != nil {
		panic("loadgen: results do not marshal: " + err.Error())
	}
	return b
}

// Admin is an operator's client of the API.
type Admin struct {
	Base  string
	Token string
	HTTP  *http.Client
}

// Do sends an operator request with a JSON body (nil for none), decodes a 2xx answer into out
// (nil to drop it) and returns what the call did; a non-2xx status is an error naming it.
func (a *Admin) Do(ctx context.Context, method, path string, body, out any) (Call, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return Call{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(a.Base, "/")+"/api/v1"+path, rd)
	if err != nil {
		return Call{}, err
	}
	req.Header.Set("Authorization", "Bearer "+a.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := a.HTTP.Do(req)
	if err != nil {
		return Call{Took: time.Since(start), Err: err}, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	resp.Body.Close()
	c := Call{Status: resp.StatusCode, Took: time.Since(start), RetryAfter: node.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), Err: err}
	if err != nil {
		return c, err
	}
	if resp.StatusCode/100 != 2 {
		c.Err = fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
		return c, c.Err
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.Err = fmt.Errorf("%s %s: decoding %w", method, path, err)
			return c, c.Err
		}
	}
	return c, nil
}

// Register registers a node and returns its token and generation.
func (a *Admin) Register(ctx context.Context, name string) (string, int64, Call, error) {
	var out struct {
		Token      string `json:"token"`
		Generation int64  `json:"generation"`
	}
	c, err := a.Do(ctx, http.MethodPost, "/nodes", map[string]string{"name": name}, &out)
	return out.Token, out.Generation, c, err
}

// PutModule uploads a new revision of a module.
func (a *Admin) PutModule(ctx context.Context, module string, rs []hq.Resource) (Call, error) {
	return a.Do(ctx, http.MethodPut, "/modules/"+url.PathEscape(module), map[string][]hq.Resource{"resources": rs}, nil)
}

// Assign assigns a module to a node, untaken, and returns the node's new generation.
func (a *Admin) Assign(ctx context.Context, name, module string) (int64, Call, error) {
	var out struct {
		Generation int64 `json:"generation"`
	}
	c, err := a.Do(ctx, http.MethodPut, "/nodes/"+url.PathEscape(name)+"/assignments/"+url.PathEscape(module), map[string]bool{"taken": false}, &out)
	return out.Generation, c, err
}
