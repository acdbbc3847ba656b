package hostd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/certs"
	"github.com/meshhq/hq/client/node"
)

// idleConnTimeout is how long hostd keeps an idle connection: less than the controller's
// idle timeout (5 s), so hostd never sends on a connection the controller is closing.
const idleConnTimeout = 4 * time.Second

// client is hostd's side of the node API: the one the load generator's hosts speak too.
type client = node.Client

// newClient is the node's client of its controllers, with no transport of its own yet.
func newClient(bases []string, name, token string) *client {
	return node.New(bases, 0, name, token, &http.Client{})
}

// watchTLS tells w the outcome of every call c makes.
func watchTLS(c *client, w *tlsWatch) {
	c.Observe = func(_ string, call node.Call) { w.observe(call.Err) }
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

// postReport posts one report and returns the controller's answer, or why there is none.
func postReport(ctx context.Context, c *client, r *hq.Report) (*hq.ReportResponse, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	rr, call := c.Report(ctx, node.Body{body})
	if err := call.Failure(); err != nil {
		return nil, err
	}
	return &rr, nil
}
