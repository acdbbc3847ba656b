// Package webui serves the operator's status pages: the mesh at / and one node at
// /nodes/{node}, rendered on the server from the same store the API reads, with no JavaScript.
package webui

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq/db"
)

//go:embed templates/*.html
var templateFS embed.FS

// refreshSeconds is how often a page reloads itself; the status of a mesh moves on the hosts'
// interval, so a few seconds more or less make no difference to an operator watching it.
const refreshSeconds = 10

// UI holds the parsed templates and what the pages read.
type UI struct {
	store *db.Store
	auth  auth
	log   *slog.Logger
	// Now is the clock the relative times are measured from; tests replace it.
	Now   func() time.Time
	pages map[string]*template.Template
}

// New parses every template once, so a broken template fails at start rather than on a page
// an operator opens during an incident.
func New(store *db.Store, adminToken string, log *slog.Logger) (*UI, error) {
	if adminToken == "" {
		return nil, fmt.Errorf("webui: an operator token is required")
	}
	u := &UI{store: store, auth: newAuth(adminToken), log: log, Now: time.Now, pages: map[string]*template.Template{}}
	for _, page := range []string{"mesh", "node", "login", "message"} {
		t, err := template.ParseFS(templateFS, "templates/layout.html", "templates/"+page+".html")
		if err != nil {
			return nil, fmt.Errorf("webui: parse %s: %w", page, err)
		}
		u.pages[page] = t
	}
	return u, nil
}

// Routes mounts the pages on r: /login is open, everything else wants the operator token;
// signing in and out is refused to a form another site sent.
func (u *UI) Routes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(headers)
		r.Get("/login", u.loginForm)
		r.With(u.sameOrigin).Post("/login", u.login)
		r.With(u.sameOrigin).Post("/logout", u.logout)
		r.Group(func(r chi.Router) {
			r.Use(u.operatorOnly)
			r.Get("/", u.mesh)
			r.Get("/nodes/{node}", u.node)
		})
	})
}

// headers keeps the pages out of caches and frames, and forbids every script outright, so even
// a value that escaped escaping could not run. The referrer goes to no other site; to hq's own
// it goes, because under no-referrer a browser sends "Origin: null" with the sign-in form, which
// the cross-site check must refuse.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// render executes a page into a buffer and only then writes it, so a template error answers
// 500 instead of half a page.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	var buf bytes.Buffer
	if err := u.pages[page].Execute(&buf, data); err != nil {
		u.log.ErrorContext(r.Context(), "webui: render", "page", page, "path", r.URL.Path, "err", err)
		http.Error(w, "internal error: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail answers a store error: a missing node is a 404 page, anything else a 500 whose detail
// goes only to the log.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, err error) {
	if hqNotFound(err) {
		u.render(w, r, http.StatusNotFound, "message", messagePage{Title: "not found", Message: errMessage(err)})
		return
	}
	u.log.ErrorContext(r.Context(), "webui: store", "path", r.URL.Path, "err", err)
	u.render(w, r, http.StatusInternalServerError, "message", messagePage{Title: "error", Message: "the store could not be read; see the controller's log"})
}
