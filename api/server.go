// Package api serves hq's HTTP API: the operator's calls and the nodes' declarations and
// reports, over one store.
package api

import (
	"cmp"
	"crypto/ed25519"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/api/longpoll"
	"github.com/meshhq/hq/internal/guesses"
)

// Server holds what the handlers share.
type Server struct {
	Store      Store
	AdminToken string
	// Instance names this process in every send it records.
	Instance string
	// Key signs every declaration when Keys is nil: a key that never rotates, for tests and
	// embedding. With neither, declarations are sent unsigned.
	Key ed25519.PrivateKey
	// Keys, when set, is asked for the keys on every declaration and report, so a key rotated
	// on disk signs at once; the controller answers it from the key file it watches.
	Keys func() *Keys
	Log  *slog.Logger
	// MaxWait bounds a declaration long-poll.
	MaxWait time.Duration
	// NodeCertificates: a node's calls must carry a verified client certificate that names
	// the node, besides its token (HQ_CLIENT_CA).
	NodeCertificates bool
	// MaxReportsInFlight bounds the reports taken in at once; past it they are answered 503.
	// RetryAfter is the least a turned-away client is told to wait (seconds; it is jittered up
	// to twice that).
	MaxReportsInFlight int
	RetryAfter         int
	// ReportsPerNode bounds one node's reports taken in at once (0: DefaultReportsPerNode);
	// past it they are answered 503 as past MaxReportsInFlight. NodeReportRate bounds how fast
	// one node may report, in reports a second with a burst of NodeReportBurst (0: no bound);
	// past it a report is answered 429 with Retry-After and stores nothing (nodereports.go).
	ReportsPerNode  int
	NodeReportRate  float64
	NodeReportBurst int
	reports         *admission
	nodeReports     *nodeReports
	// NoPacing answers a long-poll's new declaration at once, even while the reports in flight
	// fill half of MaxReportsInFlight (HQ_PACING; pace.go).
	NoPacing bool
	// GeneralDecoder reads every report with encoding/json, not the scanner, and every report
	// whole (HQ_REPORT_DECODER).
	GeneralDecoder bool
	repeats        *repeats     // the results a repeat may stand for (repeats.go)
	repeatsTaken   atomic.Int64 // reports taken in without reading their results
	proven         *proven      // the tokens reports were last taken with (proven.go)
	// Lot, when set, parks the long-polls that wait, so that they hold no goroutine.
	Lot       *longpoll.Lot
	inHandler atomic.Int64 // long-polls waiting in their handler
	// MaxPolls bounds the long-polls that wait at once (0: no bound). Past it a poll is
	// answered at once with the generation there is and Retry-After, and its host polls again
	// later instead of holding a connection: a fleet larger than the connections a process can
	// hold is served by polling.
	MaxPolls int
	// PollsPerNode bounds one node's long-polls that wait at once, in the lot and in handlers
	// each (0: DefaultPollsPerNode); a newer poll takes the oldest's place.
	PollsPerNode int
	inHandlers   handlerPolls // the polls waiting in handlers, by node
	deferred     atomic.Int64 // polls answered at once for MaxPolls
	polling      pollers      // the hosts those polls came from
	// Guesses, when set, bounds the tokens that were nobody's one address may send: past it
	// the address is answered 429 before its token is looked at.
	Guesses *guesses.Limiter
	// Metrics, when set, is served at GET /metrics to the operator.
	Metrics http.Handler
	// RotateKey, when set, replaces the signing key (POST /controller-key/rotate, an admin's)
	// and returns the new key's fingerprint.
	RotateKey func() (string, error)
	// Reports, when set, is told of every report admitted: whether it was committed, and how
	// long taking it in took.
	Reports ReportObserver
}

// ReportObserver counts and times the reports taken in, for /metrics.
type ReportObserver interface {
	ObserveReport(committed bool, took time.Duration)
}

// DefaultMaxReportsInFlight: enough that a busy machine's queue for a core or for the writer is
// not mistaken for overload; MaxReportBytesInFlight bounds their memory.
const DefaultMaxReportsInFlight = 256

// Routes mounts the API under /api/v1 and /healthz on r.
func (s *Server) Routes(r chi.Router) {
	r.Get("/healthz", s.healthz)
	if s.Metrics != nil {
		r.With(s.operatorOnly).Method(http.MethodGet, "/metrics", s.Metrics)
	}
	r.Route("/api/v1", func(r chi.Router) {
		r.Get("/controller-key", s.controllerKey)
		r.With(s.nodeOrOperator).Get("/nodes/{node}/declaration", s.declaration)
		r.With(s.nodeOrOperator).Put("/nodes/{node}/secrets-key", s.putNodeSecretsKey)
		// A report is admitted before its caller is checked: a shed report then costs no read
		// of the database, and past the bound the controller has no time to spare for one.
		// A node's own bounds are counted once its token is checked: no one else spends them.
		r.With(s.admitReports, s.reporter, s.boundNode).Post("/nodes/{node}/reports", s.postReport)
		r.Group(func(r chi.Router) {
			r.Use(s.operatorOnly)
			s.nodeRoutes(r)
			s.moduleRoutes(r)
			s.assignmentRoutes(r)
			s.placementRoutes(r)
			s.rolloutRoutes(r)
			s.historyRoutes(r)
			s.secretRoutes(r)
			s.operatorRoutes(r)
			s.auditRoutes(r)
			r.Get("/status", s.status)
		})
	})
}

// Mount puts the API on r, and makes the router's own errors (no such path, method not
// allowed) speak the API's error shape, whatever else is mounted beside it.
func (s *Server) Mount(r chi.Router) {
	s.reports = newAdmission(cmp.Or(s.MaxReportsInFlight, DefaultMaxReportsInFlight))
	s.nodeReports = newNodeReports(cmp.Or(s.ReportsPerNode, DefaultReportsPerNode), s.NodeReportRate, s.NodeReportBurst)
	s.repeats = newRepeats()
	s.proven = newProven()
	if s.Keys == nil && s.Key != nil {
		fixed := NewKeys(s.Key, nil, nil)
		s.Keys = func() *Keys { return fixed }
	}
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, hq.Errorf(hq.CodeNotFound, "no such path: %s", r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, hq.Errorf(hq.CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
	})
	s.Routes(r)
}

// Handler returns the API alone with panic recovery, for tests and for embedding.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	s.Mount(r)
	return r
}

// healthz answers without auth: 200 while the controller can write, 503 with the reason while
// it cannot (its database's disk is full), so a load balancer or an operator's probe sees it.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if t, ok := s.Store.Trouble(); ok {
		s.setRetryAfter(w)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "cannot write", "reason": t.Line(), "instance": s.Instance})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "instance": s.Instance})
}
