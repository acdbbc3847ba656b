package hostd

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/certs"
)

// maxBody bounds what hostd reads from the controller.
const maxBody = 64 << 20

// idleConnTimeout is how long hostd keeps an idle connection: less than the controller's
// idle timeout (5 s), so hostd never sends on a connection the controller is closing.
const idleConnTimeout = 4 * time.Second

// client speaks the controller's node API.
type client struct {
	// bases are the controllers, any of which serves the node (they share one database); calls
	// go to bases[at] until it fails to answer at all.
	bases []string
	mu    sync.Mutex
	at    int
	node  string
	token string
	http  *http.Client
	// tls, when set, is told the outcome of every call.
	tls *tlsWatch
}

func newClient(bases []string, node, token string) *client {
	c := &client{node: node, token: token, http: &http.Client{}}
	for _, b := range bases {
		c.bases = append(c.bases, strings.TrimRight(b, "/"))
	}
	// No client-wide timeout: a long poll is meant to hang; every call sets its own deadline.
	return c
}

// base is the controller the calls go to now.
func (c *client) base() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bases[c.at]
}

// moveOn turns to the next controller when req's found nobody (refused, reset, timed out),
// unless another call already moved on, and says which it tries next. A host that shuts down
// stays where it is.
func (c *client) moveOn(req *http.Request, err error) error {
	if req.Context().Err() != nil && !errors.Is(req.Context().Err(), context.DeadlineExceeded) {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bases) == 1 || !strings.HasPrefix(req.URL.String(), c.bases[c.at]+"/") {
		return err
	}
	c.at = (c.at + 1) % len(c.bases)
	return fmt.Errorf("%w; trying %s next", err, c.bases[c.at])
}

// transportFor is how hostd reaches its controller: over HTTPS it verifies the controller with
// caFile (or the system's roots) and offers the node's certificate when it has one.
func transportFor(caFile, certFile, keyFile string) (*http.Transport, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// An idle connection is let go before the controller would close it (after 5 s): one
	// reused just as the controller closes it fails the report it carries, which then waits
	// for a retry.
	t.IdleConnTimeout = idleConnTimeout
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pool, err := certs.ReadPool(caFile)
		if err != nil {
			return nil, fmt.Errorf("HOSTD_CA: %w", err)
		}
		tc.RootCAs = pool
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("HOSTD_CERT and HOSTD_KEY: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	t.TLSClientConfig = tc
	return t, nil
}

func (c *client) nodeURL(suffix string) string {
	return c.base() + "/api/v1/nodes/" + url.PathEscape(c.node) + suffix
}

// declaration long-polls for a declaration newer than after; nil, nil means none came in wait.
// later is how long the controller asked to be left before the next poll (Retry-After on an
// answer given at once, when it holds as many long-polls as it will), 0 when it did not.
func (c *client) declaration(ctx context.Context, after int64, wait time.Duration) (d *hq.Declaration, later time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, wait+30*time.Second)
	defer cancel()
	q := url.Values{"wait": {wait.String()}}
	if after >= 0 { // without after, the controller answers at once with what it has
		q.Set("after", strconv.FormatInt(after, 10))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.nodeURL("/declaration?"+q.Encode()), nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := c.do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	later = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	if resp.StatusCode == http.StatusNotModified {
		return nil, later, nil
	}
	d = &hq.Declaration{}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(d); err != nil {
		return nil, 0, fmt.Errorf("decoding declaration: %w", err)
	}
	return d, later, nil
}

// report posts one report and returns the controller's answer.
func (c *client) report(ctx context.Context, r *hq.Report) (*hq.ReportResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.nodeURL("/reports"), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var rr hq.ReportResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&rr); err != nil {
		return nil, fmt.Errorf("decoding report response: %w", err)
	}
	return &rr, nil
}

// controllerKey fetches the controller's public key (base64). A controller that publishes none
// answers an error like any other: hostd applies nothing unsigned.
func (c *client) controllerKey(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base()+"/api/v1/controller-key", nil)
	if err != nil {
		return "", err
	}
	resp, err := c.send(req)
	if err != nil {
		return "", c.moveOn(req, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", statusError(resp)
	}
	var k struct {
		Key string `json:"key"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBody)).Decode(&k); err != nil {
		return "", fmt.Errorf("decoding controller key: %w", err)
	}
	if k.Key == "" {
		return "", errors.New("the controller answered an empty key")
	}
	return k.Key, nil
}

// do sends an authenticated request; any status but 200 and 304 is an error.
func (c *client) do(req *http.Request) (*http.Response, error) {
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.send(req)
	if err != nil {
		return nil, c.moveOn(req, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotModified {
		defer resp.Body.Close()
		return nil, statusError(resp)
	}
	return resp, nil
}

// send is every call to the controller: any answer at all means TLS worked.
func (c *client) send(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	c.tls.observe(err)
	return resp, err
}

// controllerError is an answer of the controller other than 200 and 304. When the body is the
// API's {"error":{"code","message","details"}} it unwraps to that *hq.Error, so errors.As and
// hq.ErrorCode see the code and the per-field details.
type controllerError struct {
	// Status is the HTTP status code, StatusText the status line ("422 Unprocessable Entity").
	Status     int
	StatusText string
	// API is the error the body carries; nil when the body is not the API's.
	API *hq.Error
	// RetryAfter is how long the controller asked to wait (Retry-After); 0 when it did not.
	RetryAfter time.Duration
}

// maxDetails bounds the field errors an error's text names; the rest are counted.
const maxDetails = 10

func (e *controllerError) Error() string {
	s := "controller answered " + e.StatusText
	if e.API == nil {
		return s
	}
	if m := cmp.Or(e.API.Message, string(e.API.Code)); m != "" {
		s += ": " + m
	}
	if n := len(e.API.Details); n > 0 {
		fields := make([]string, 0, min(n, maxDetails)+1)
		for _, d := range e.API.Details[:min(n, maxDetails)] {
			fields = append(fields, d.Field+": "+d.Message)
		}
		if n > maxDetails {
			fields = append(fields, fmt.Sprintf("and %d more", n-maxDetails))
		}
		s += " (" + strings.Join(fields, "; ") + ")"
	}
	return s
}

func (e *controllerError) Unwrap() error {
	if e.API == nil {
		return nil
	}
	return e.API
}

// overloadedFor reports whether err is the controller shedding load (503, or 429 too many
// requests) and how long it asked to wait, if it said.
func overloadedFor(err error) (time.Duration, bool) {
	e, ok := errors.AsType[*controllerError](err)
	if !ok || e.Status != http.StatusServiceUnavailable && e.Status != http.StatusTooManyRequests {
		return 0, false
	}
	return e.RetryAfter, true
}

// statusError turns a controller error response into a *controllerError.
func statusError(resp *http.Response) error {
	e := &controllerError{Status: resp.StatusCode, StatusText: resp.Status,
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())}
	var body struct {
		Error *hq.Error `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &body) == nil && body.Error != nil && (body.Error.Code != "" || body.Error.Message != "") {
		e.API = body.Error
	}
	return e
}

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date. 0 when absent or
// unreadable.
func parseRetryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(h), 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if at, err := http.ParseTime(h); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}
