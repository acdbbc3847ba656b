// Package loadgen simulates hosts against a real hq controller over HTTP, exactly as hostd
// speaks to it: register, long-poll the declaration, report a result for every declared
// resource. cmd/hq-loadgen drives a fleet of them through timed phases; the end-to-end crash
// campaigns use the same hosts.
package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
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
// Retry-After the controller asked for, if any.
type Call struct {
	Status     int
	Took       time.Duration
	RetryAfter time.Duration
	Err        error
	// Controller is the place, in the host's list, of the controller the call went to.
	Controller int
}

// Observer is told about every request a host makes; it must be safe for concurrent use.
type Observer func(kind string, c Call)

// Host is one simulated node: its name, its token, and the last declaration it received.
type Host struct {
	Name  string
	Token string
	// bases are the controllers the host may speak to, and at the place of the one it speaks
	// to now.
	bases []string
	at    atomic.Int64
	http  *http.Client
	obs   Observer

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
	h := &Host{Name: name, Token: token, http: client, obs: obs}
	for _, b := range bases {
		h.bases = append(h.bases, strings.TrimRight(b, "/"))
	}
	h.at.Store(int64(first))
	return h
}

// Controller is the place, in the host's list, of the controller it speaks to now.
func (h *Host) Controller() int { return int(h.at.Load()) }

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

// request is a request of the host's to the controller it speaks to now, whose place in its
// list it returns too.
func (h *Host) request(ctx context.Context, method, suffix string, body io.Reader) (*http.Request, int, error) {
	at := int(h.at.Load())
	req, err := http.NewRequestWithContext(ctx, method, h.bases[at]+"/api/v1/nodes/"+url.PathEscape(h.Name)+suffix, body)
	return req, at, err
}

// do sends req, made for the controller at place at, with the host's token, reads the whole
// answer (so the connection is kept for the next request) and tells the observer. A request
// that got no answer turns the host to its next controller.
func (h *Host) do(kind string, req *http.Request, at int) (Call, []byte) {
	req.Header.Set("Authorization", "Bearer "+h.Token)
	start := time.Now()
	resp, err := h.http.Do(req)
	c := Call{Controller: at}
	var body []byte
	if err == nil {
		body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		c.Status = resp.StatusCode
		c.RetryAfter = retryAfter(resp.Header.Get("Retry-After"))
		h.answeredBy.Store(int64(at))
		h.answeredAt.Store(time.Now().UnixNano())
	} else if req.Context().Err() == nil && len(h.bases) > 1 {
		h.at.CompareAndSwap(int64(at), int64((at+1)%len(h.bases)))
	}
	c.Took, c.Err = time.Since(start), err
	if h.obs != nil && !errors.Is(req.Context().Err(), context.Canceled) {
		h.obs(kind, c)
	}
	return c, body
}

// retryAfter reads a Retry-After of whole seconds; 0 when absent or not seconds.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// Declaration asks for a declaration newer than after, waiting up to wait as hostd's
// long-poll does; after < 0 asks for the current one at once. It returns nil and a 304 call
// when none came.
func (h *Host) Declaration(ctx context.Context, after int64, wait time.Duration) (*hq.Declaration, Call) {
	q := url.Values{"wait": {wait.String()}}
	if after >= 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	ctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
	defer cancel()
	req, at, err := h.request(ctx, http.MethodGet, "/declaration?"+q.Encode(), nil)
	if err != nil {
		return nil, Call{Err: err}
	}
	kind := "declaration"
	if wait > 0 {
		kind = "poll"
	}
	c, body := h.do(kind, req, at)
	if c.Err != nil || c.Status != http.StatusOK {
		return nil, c
	}
	var d hq.Declaration
	if err := json.Unmarshal(body, &d); err != nil {
		c.Err = fmt.Errorf("decoding declaration: %w", err)
		return nil, c
	}
	return &d, c
}

// PostReport posts one report body once and decodes a 200 answer.
func (h *Host) PostReport(ctx context.Context, body Body) (hq.ReportResponse, Call) {
	var rr hq.ReportResponse
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rd, n := body.reader()
	req, at, err := h.request(ctx, http.MethodPost, "/reports", rd)
	if err != nil {
		return rr, Call{Err: err}
	}
	req.ContentLength = n
	req.GetBody = func() (io.ReadCloser, error) { rd, _ := body.reader(); return io.NopCloser(rd), nil }
	req.Header.Set("Content-Type", "application/json")
	c, b := h.do("report", req, at)
	if c.Err == nil && c.Status == http.StatusOK {
		h.acks.Add(1)
		if err := json.Unmarshal(b, &rr); err != nil {
			c.Err = fmt.Errorf("decoding report answer: %w", err)
		}
	}
	return rr, c
}

// Body is a request body in parts, sent one after the other. The results of a fleet's
// reports are the same bytes for every host at the same revisions, so a report is its own
// header and the shared results, not a copy of them: copies at a fleet's rate are the
// generator's garbage, and its collections, marking tens of thousands of goroutines' stacks,
// would stall its hosts in the middle of what it measures.
type Body [][]byte

func (b Body) reader() (io.Reader, int64) {
	parts := make([]io.Reader, len(b))
	var n int64
	for i, p := range b {
		parts[i] = bytes.NewReader(p)
		n += int64(len(p))
	}
	return io.MultiReader(parts...), n
}

// Bytes is the body in one piece.
func (b Body) Bytes() []byte { return bytes.Join(b, nil) }

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
	c := Call{Status: resp.StatusCode, Took: time.Since(start), RetryAfter: retryAfter(resp.Header.Get("Retry-After")), Err: err}
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
func (a *Admin) Register(ctx context.Context, node string) (string, int64, Call, error) {
	var out struct {
		Token      string `json:"token"`
		Generation int64  `json:"generation"`
	}
	c, err := a.Do(ctx, http.MethodPost, "/nodes", map[string]string{"name": node}, &out)
	return out.Token, out.Generation, c, err
}

// PutModule uploads a new revision of a module.
func (a *Admin) PutModule(ctx context.Context, module string, rs []hq.Resource) (Call, error) {
	return a.Do(ctx, http.MethodPut, "/modules/"+url.PathEscape(module), map[string][]hq.Resource{"resources": rs}, nil)
}

// Assign assigns a module to a node, untaken, and returns the node's new generation.
func (a *Admin) Assign(ctx context.Context, node, module string) (int64, Call, error) {
	var out struct {
		Generation int64 `json:"generation"`
	}
	c, err := a.Do(ctx, http.MethodPut, "/nodes/"+url.PathEscape(node)+"/assignments/"+url.PathEscape(module), map[string]bool{"taken": false}, &out)
	return out.Generation, c, err
}
