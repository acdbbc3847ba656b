package hostd

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/meshhq/hq"
)

// tlsTrouble says why a call to the controller failed when TLS is why: the certificate the
// controller showed did not verify, the controller refused the handshake (this node's client
// certificate), or what answered does not speak TLS. It is "" for any other failure. Its words
// stay the same from one attempt to the next (no clock in them), so each cause is logged once.
func tlsTrouble(err error) string {
	if v, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return "tls: failed to verify the controller's certificate: " + verifyCause(v.Err)
	}
	// The other side's alert comes back as the error of a read, e.g. "remote error: tls:
	// expired certificate" when the controller does not accept this node's certificate.
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "remote error" {
		return "the controller refused the TLS handshake: " + op.Error()
	}
	if _, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		return "tls: what answered at the controller's address does not speak TLS"
	}
	if _, ok := errors.AsType[tls.AlertError](err); ok {
		if u, ok := errors.AsType[*url.Error](err); ok {
			return u.Err.Error()
		}
		return err.Error()
	}
	return ""
}

// verifyCause is x509's reason a certificate did not verify, without the current time an
// expired one's carries.
func verifyCause(err error) string {
	if e, ok := errors.AsType[x509.CertificateInvalidError](err); ok && e.Reason == x509.Expired {
		return fmt.Sprintf("x509: certificate has expired or is not yet valid: it is valid from %s to %s",
			hq.FormatTime(e.Cert.NotBefore), hq.FormatTime(e.Cert.NotAfter))
	}
	return err.Error()
}

// maxCauses bounds the distinct causes one refusal keeps for its report.
const maxCauses = 3

// tlsWatch follows the calls to the controller for TLS failures. It logs each new cause once,
// with what hostd trusts and offers, not at every retry; when a call goes through again it says
// so and keeps the refusal — from when to when, and why — for the next report to carry.
type tlsWatch struct {
	log *slog.Logger
	// attrs say what hostd was configured with: the controller's URL, HOSTD_CA, HOSTD_CERT.
	attrs []any

	mu sync.Mutex
	// since is the first failure of the refusal going on; zero when calls go through.
	since time.Time
	// causes are the refusal's distinct causes in order, up to maxCauses; logged all of them.
	causes []string
	logged map[string]bool
	// ended is a refusal over and not yet delivered in a report.
	ended *hq.TransportRefusal
}

func newTLSWatch(log *slog.Logger, controller, caFile, certFile string) *tlsWatch {
	ca := caFile
	if ca == "" {
		ca = "the system's roots"
	}
	attrs := []any{"controller", controller, "ca", ca}
	if certFile != "" {
		attrs = append(attrs, "cert", certFile)
	}
	return &tlsWatch{log: log, attrs: attrs}
}

// observe takes in the outcome of one call: err is what the HTTP client returned.
func (w *tlsWatch) observe(err error) {
	if w == nil {
		return
	}
	if err == nil {
		w.through()
		return
	}
	if cause := tlsTrouble(err); cause != "" {
		w.refused(cause)
	}
}

func (w *tlsWatch) refused(cause string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		w.since, w.logged = time.Now(), map[string]bool{}
	}
	if w.logged[cause] {
		return
	}
	w.logged[cause] = true
	if len(w.causes) < maxCauses {
		w.causes = append(w.causes, cause)
	}
	w.log.Error("cannot talk to the controller: TLS failed; hostd goes on reconciling what it has, and fetches and reports nothing until TLS works",
		append([]any{"cause", cause}, w.attrs...)...)
}

func (w *tlsWatch) through() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		return
	}
	now := time.Now()
	r := &hq.TransportRefusal{From: w.since.UTC(), To: now.UTC(), Reason: strings.Join(w.causes, "; then ")}
	if prev := w.ended; prev != nil {
		// Refused again before the last one was reported: one refusal, from the first failure.
		r.From, r.Reason = prev.From, hq.TruncateText(prev.Reason+"; then "+r.Reason)
	}
	w.ended, w.since, w.causes, w.logged = r, time.Time{}, nil, nil
	w.log.Info("TLS with the controller works again; the next report says it was refused",
		"refused_for", now.Sub(r.From).Round(time.Millisecond), "reason", r.Reason)
}

// pending is the refusal the next report carries; nil when there is none.
func (w *tlsWatch) pending() *hq.TransportRefusal {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

// delivered forgets r once a report carrying it was accepted; a refusal that ended since stays.
func (w *tlsWatch) delivered(r *hq.TransportRefusal) {
	if w == nil || r == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended == r {
		w.ended = nil
	}
}
