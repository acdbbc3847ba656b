// Package node is the controller's node API as a host speaks it: a node's declaration
// long-polled and its reports posted with the node's own token, and the controller's key
// fetched, over one controller or several sharing one database. hostd and the load generator's
// hollow hosts both speak through it, so what they send and how they read an answer (its
// status, its Retry-After, its error body) is one code.
//
// A call returns a Call: what the answer was and how long it took. Err is set only when no
// answer came (refused, reset, timed out) or an answer could not be read; an answer with a
// status other than 200 and 304 is not an Err, and Failure turns it into an *Error carrying the
// API's code and message. A call that got no answer turns the client to its next controller.
package node

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
	"sync/atomic"
	"time"

	"github.com/meshhq/hq"
)

// MaxBody bounds what a host reads of one answer.
const MaxBody = 64 << 20

// Client is one node's calls to its controllers.
type Client struct {
	// Name and Token are the node's.
	Name, Token string
	// HTTP sends every call. It has no timeout of its own: a long-poll is meant to hang, and
	// every call sets its own deadline.
	HTTP *http.Client
	// Observe, when set, is told what every call did, before its answer is decoded: kind is
	// "declaration", "poll", "report" or "key", and c.Err the transport's error alone. It must
	// be safe for concurrent use.
	Observe func(kind string, c Call)

	// bases are the controllers, any of which serves the node; calls go to bases[at] until
	// one gets no answer at all.
	bases []string
	at    atomic.Int64
}

// New returns the client of node name with token, speaking to bases[first] first.
func New(bases []string, first int, name, token string, hc *http.Client) *Client {
	c := &Client{Name: name, Token: token, HTTP: hc}
	for _, b := range bases {
		c.bases = append(c.bases, strings.TrimRight(b, "/"))
	}
	c.at.Store(int64(first))
	return c
}

// Controller is the place, in the client's list, of the controller it speaks to now.
func (c *Client) Controller() int { return int(c.at.Load()) }

// Base is the controller it speaks to now.
func (c *Client) Base() string { return c.bases[c.Controller()] }

// Call is what one request did.
type Call struct {
	// Status is the answer's HTTP status; 0 when no answer came.
	Status int
	// Took is how long the call took; RetryAfter how long the controller asked to be left
	// (Retry-After, seconds or a date), 0 when it did not.
	Took, RetryAfter time.Duration
	// Err says why no answer came, or why the answer could not be read.
	Err error
	// Controller is the place, in the client's list, of the controller the call went to.
	Controller int
	// refused is the answer of a status other than 200 and 304, read from its body.
	refused *Error
}

// Failure is the call's error: Err, or the controller's refusal as an *Error; nil for 200 and
// 304.
func (c Call) Failure() error {
	if c.Err != nil {
		return c.Err
	}
	if c.refused != nil {
		return c.refused
	}
	return nil
}

// Declaration asks for a declaration newer than after, waiting up to wait; after < 0 asks for
// the current one at once. It returns nil with a 304 when none came in wait.
func (c *Client) Declaration(ctx context.Context, after int64, wait time.Duration) (*hq.Declaration, Call) {
	ctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
	defer cancel()
	q := url.Values{"wait": {wait.String()}}
	if after >= 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	kind := "declaration"
	if wait > 0 {
		kind = "poll"
	}
	call, body := c.do(ctx, kind, http.MethodGet, c.nodePath("/declaration?"+q.Encode()), nil, true)
	if call.Status != http.StatusOK || call.Err != nil {
		return nil, call
	}
	d := &hq.Declaration{}
	if err := json.Unmarshal(body, d); err != nil {
		call.Err = fmt.Errorf("decoding declaration: %w", err)
		return nil, call
	}
	return d, call
}

// Report posts one report body once and decodes a 200 answer.
func (c *Client) Report(ctx context.Context, body Body) (hq.ReportResponse, Call) {
	var rr hq.ReportResponse
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	call, answer := c.do(ctx, "report", http.MethodPost, c.nodePath("/reports"), body, true)
	if call.Status == http.StatusOK && call.Err == nil {
		if err := json.Unmarshal(answer, &rr); err != nil {
			call.Err = fmt.Errorf("decoding report response: %w", err)
		}
	}
	return rr, call
}

// ControllerKey fetches the controller's public signing key (base64), without the node's
// token. A controller that publishes none answers an error like any other.
func (c *Client) ControllerKey(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	call, body := c.do(ctx, "key", http.MethodGet, "/api/v1/controller-key", nil, false)
	if err := call.Failure(); err != nil {
		return "", err
	}
	var k struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(body, &k); err != nil {
		return "", fmt.Errorf("decoding controller key: %w", err)
	}
	if k.Key == "" {
		return "", errors.New("the controller answered an empty key")
	}
	return k.Key, nil
}

func (c *Client) nodePath(suffix string) string {
	return "/api/v1/nodes/" + url.PathEscape(c.Name) + suffix
}

// do sends one call to the controller spoken to now and reads the whole answer, so the
// connection is kept for the next call. A call that got no answer turns the client to the
// next controller, unless the caller gave up on it.
func (c *Client) do(ctx context.Context, kind, method, path string, body Body, auth bool) (Call, []byte) {
	at := c.Controller()
	call := Call{Controller: at}
	rd, n := body.reader()
	req, err := http.NewRequestWithContext(ctx, method, c.bases[at]+path, rd)
	if err != nil {
		call.Err = err
		return call, nil
	}
	if body != nil {
		req.ContentLength = n
		req.GetBody = func() (io.ReadCloser, error) { rd, _ := body.reader(); return io.NopCloser(rd), nil }
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	start := time.Now()
	resp, err := c.HTTP.Do(req)
	var answer []byte
	if err == nil {
		answer, err = io.ReadAll(io.LimitReader(resp.Body, MaxBody))
		resp.Body.Close()
		call.Status = resp.StatusCode
		call.RetryAfter = ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		if call.Status != http.StatusOK && call.Status != http.StatusNotModified {
			call.refused = refusal(resp, answer, call.RetryAfter)
		}
	} else {
		err = c.moveOn(ctx, at, err)
	}
	call.Took, call.Err = time.Since(start), err
	if c.Observe != nil && !errors.Is(ctx.Err(), context.Canceled) {
		c.Observe(kind, call)
	}
	return call, answer
}

// moveOn turns to the next controller after a call to bases[at] found nobody (refused, reset,
// timed out), unless another call already moved on, and says which it tries next. A caller
// that gave up on the call (a host shutting down) stays where it is.
func (c *Client) moveOn(ctx context.Context, at int, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) || len(c.bases) == 1 {
		return err
	}
	next := (at + 1) % len(c.bases)
	if !c.at.CompareAndSwap(int64(at), int64(next)) {
		return err
	}
	return fmt.Errorf("%w; trying %s next", err, c.bases[next])
}

// Body is a request body in parts, sent one after the other. A fleet's reports share the bytes
// of their results, so a hollow host's report is its own header and the shared results rather
// than a copy: copies at a fleet's rate would be the generator's garbage, and its collections
// would stall its hosts in the middle of what it measures.
type Body [][]byte

func (b Body) reader() (io.Reader, int64) {
	if b == nil {
		return nil, 0
	}
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

// PutSecretsKey registers the public half of the node's own age key, to which the controller
// seals the secrets of its declaration.
func (c *Client) PutSecretsKey(ctx context.Context, public string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body, err := json.Marshal(map[string]string{"key": public})
	if err != nil {
		return err
	}
	call, _ := c.do(ctx, "secrets-key", http.MethodPut, c.nodePath("/secrets-key"), Body{body}, true)
	return call.Failure()
}
