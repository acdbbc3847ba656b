// Package api serves hq's HTTP API: the operator's calls and the nodes' declarations and
// reports, over one store.
package api

import (
	"crypto/ed25519"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/webui"
)

// Server holds what the handlers share.
type Server struct {
	Store      *db.Store
	AdminToken string
	// Instance names this process in every send it records.
	Instance string
	// Key signs every declaration; nil sends them unsigned.
	Key ed25519.PrivateKey
	Log *slog.Logger
	// MaxWait bounds a declaration long-poll.
	MaxWait time.Duration
	// Pages, when set, serves the status pages at / beside the API: two faces of one store.
	Pages *webui.UI
}

// Routes mounts the API under /api/v1 and /healthz on r.
func (s *Server) Routes(r chi.Router) {
	r.Get("/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "instance": s.Instance})
	})
	r.Route("/api/v1", func(r chi.Router) {
		r.Get("/controller-key", s.controllerKey)
		r.Group(func(r chi.Router) {
			r.Use(s.nodeOrOperator)
			r.Get("/nodes/{node}/declaration", s.declaration)
			r.Post("/nodes/{node}/reports", s.postReport)
		})
		r.Group(func(r chi.Router) {
			r.Use(s.operatorOnly)
			s.nodeRoutes(r)
			s.moduleRoutes(r)
			s.assignmentRoutes(r)
			s.historyRoutes(r)
			r.Get("/status", s.status)
		})
	})
}

// Handler returns the whole HTTP handler: request logging, panic recovery and the routes.
func (s *Server) Handler() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.Recoverer, s.logRequests)
	// Errors of the router itself speak the API's error shape too.
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, hq.Errorf(hq.CodeNotFound, "no such path: %s", r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, hq.Errorf(hq.CodeMethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
	})
	s.Routes(r)
	if s.Pages != nil {
		s.Pages.Routes(r)
	}
	return r
}

// logRequests logs every request but the long-polls that ended with nothing new, which would
// drown the log of a large mesh.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		start := time.Now()
		next.ServeHTTP(ww, r)
		if ww.Status() == http.StatusNotModified {
			return
		}
		s.Log.LogAttrs(r.Context(), slog.LevelInfo, "http",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", ww.Status()), slog.Duration("took", time.Since(start)))
	})
}
