package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/authz"
	"github.com/meshhq/hq/db"
)

const auditKey ctxKey = 1

// auditNote is what a handler adds to its request's audit entry: the object when the path
// does not name it, the revision or generation it made, a short detail.
type auditNote struct {
	object string
	result int64
	detail string
}

// noteAudit adds to the request's audit entry, when it has one; set only what is not zero.
func noteAudit(r *http.Request, object string, result int64, detail string) {
	n, ok := r.Context().Value(auditKey).(*auditNote)
	if !ok {
		return
	}
	if object != "" {
		n.object = object
	}
	if result != 0 {
		n.result = result
	}
	if detail != "" {
		n.detail = detail
	}
}

// audit appends the request's entry, right after it was answered: its own transaction, so
// a refused change is recorded although nothing else was written. A failure to write it is
// logged; the answer has gone.
func (s *Server) audit(ctx context.Context, id hq.Identity, rule authz.Rule, n *auditNote, status int, etag string) {
	if n.result == 0 && status < 300 {
		// A write to a node answers its new generation as the ETag.
		n.result, _ = strconv.ParseInt(strings.Trim(etag, `"`), 10, 64)
	}
	action := rule.Action
	if action == "" {
		action = "unlisted"
	}
	e := hq.AuditEntry{Operator: id.Operator, Role: id.Role, Via: id.Via, Source: id.Source, Action: action,
		Object: n.object, Result: n.result, Outcome: status, Detail: n.detail}
	// The request's context may end with its answer; the entry must still be written.
	if err := s.Store.Audit(context.WithoutCancel(ctx), e); err != nil {
		s.Log.ErrorContext(ctx, "audit log", "action", action, "object", n.object, "err", err)
	}
}

// statusRecorder keeps the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusRecorder) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

func (s *Server) auditRoutes(r chi.Router) {
	r.Get("/audit", s.listAudit)
}

// listAudit answers GET /audit?operator=&object=&action=&since=&before=&limit=: a page of the
// audit log, newest first; next is the before of the next page.
func (s *Server) listAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := db.AuditFilter{Operator: q.Get("operator"), Object: q.Get("object"), Action: q.Get("action")}
	var err error
	if v := q.Get("since"); v != "" {
		if f.Since, err = parseSince(v); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	if v := q.Get("before"); v != "" {
		if f.Before, err = strconv.ParseInt(v, 10, 64); err != nil || f.Before < 0 {
			s.writeError(w, r, hq.Errorf(hq.CodeBadRequest, "before is an entry id, a positive number, not %q", v))
			return
		}
	}
	n, err := limit(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	f.Limit = int(n)
	page, err := s.Store.ListAudit(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// parseSince reads since as a time (RFC 3339) or a duration back from now (24h).
func parseSince(v string) (time.Time, error) {
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return time.Now().Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, hq.Errorf(hq.CodeBadRequest, "since is a time (RFC 3339) or a duration back from now (24h), not %q", v)
	}
	return t, nil
}
