package webui

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/authz"
)

// authorize lets an action through when the signed-in operator's role and scope allow it, by
// the same table as the API (package authz), and writes its row of the audit log, allowed or
// refused.
func (u *UI) authorize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := hq.IdentityFrom(r.Context())
		rule, listed := authz.Lookup(r.Method, chi.RouteContext(r.Context()).RoutePattern())
		note := &auditNote{object: rule.ObjectOf(func(k string) string { return chi.URLParam(r, k) })}
		r = r.WithContext(context.WithValue(r.Context(), auditNoteKey{}, note))
		rec := &statusRecorder{ResponseWriter: w}
		var err error
		switch {
		case !listed:
			err = hq.Errorf(hq.CodeForbidden, "%s %s has no entry in the authorization table", r.Method, r.URL.Path)
		default:
			if err = rule.Role(id); err == nil {
				err = rule.Check(r.Context(), u.store, id, func(k string) string { return chi.URLParam(r, k) })
			}
		}
		if err != nil {
			u.fail(rec, r, err)
		} else {
			next.ServeHTTP(rec, r)
		}
		e := hq.AuditEntry{Operator: id.Operator, Role: id.Role, Via: hq.ViaPage, Source: id.Source, Action: rule.Action,
			Object: note.object, Outcome: rec.status(), Detail: auditDetail(id, note.detail)}
		if err := u.store.Audit(context.WithoutCancel(r.Context()), e); err != nil {
			u.log.ErrorContext(r.Context(), "webui: audit log", "action", rule.Action, "err", err)
		}
	})
}

// auditDetail is an entry's detail, which says so when the person signed in through the
// provider: their name is the provider's, not an operator's.
func auditDetail(id hq.Identity, detail string) string {
	switch {
	case id.SignIn != hq.SignInOIDC:
		return detail
	case detail == "":
		return "via OIDC"
	}
	return "via OIDC: " + detail
}

type auditNoteKey struct{}

// auditNote is what an action adds to its audit entry.
type auditNote struct {
	object string
	detail string
}

// noteDetail sets the detail of the request's audit entry, when it has one.
func noteDetail(r *http.Request, detail string) {
	if n, ok := r.Context().Value(auditNoteKey{}).(*auditNote); ok {
		n.detail = detail
	}
}

// statusRecorder keeps the status an action answered with.
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
