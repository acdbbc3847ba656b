// Package webui serves the operator's pages, rendered on the server from the same store the API
// reads, with no JavaScript: the mesh at /, a node at /nodes/{node}, the rollouts, the
// placements, and the modules with their revisions and the difference between two. The few
// actions (retry, take, pause, resume, promote, abort, roll back) are forms posted with a
// token of the session.
package webui

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/guesses"
	"github.com/meshhq/hq/selector"
)

//go:embed templates/*.html
var templateFS embed.FS

// refreshSeconds is how often a page reloads itself; the status of a mesh moves on the hosts'
// interval, so a few seconds more or less make no difference to an operator watching it.
const refreshSeconds = 10

// Store is what the pages read and do, and nothing more; *db.Store is one.
type Store interface {
	CreateSession(ctx context.Context, secret string, expires time.Time, who hq.Identity) error
	Session(ctx context.Context, secret string) (hq.Identity, bool, error)
	CheckOperatorToken(ctx context.Context, token string) (db.OperatorCheck, error)
	Audit(ctx context.Context, e hq.AuditEntry) error
	ListAudit(ctx context.Context, f db.AuditFilter) (db.AuditPage, error)
	GetPlacement(ctx context.Context, name string) (hq.Placement, error)
	DeleteSession(ctx context.Context, secret string) error
	// Trouble says whether the controller cannot write, and why.
	Trouble() (db.WriteTrouble, bool)

	MeshStatus(ctx context.Context) (hq.MeshStatus, error)
	// MeshStatusOf is MeshStatus of the nodes a selector matches; nil is every node.
	MeshStatusOf(ctx context.Context, sel *selector.Selector) (hq.MeshStatus, error)
	ListNodes(ctx context.Context, f db.NodeFilter) (db.NodePage, error)
	ConvergedHistory(ctx context.Context, first time.Time, step time.Duration, n int) ([]db.ConvergedAt, error)

	GetNode(ctx context.Context, name string) (hq.NodeView, error)
	DeletedAt(ctx context.Context, name string) (time.Time, error)
	ReportOutcomes(ctx context.Context, node string, limit int64) ([]db.ReportOutcome, error)
	Sends(ctx context.Context, node string, limit int64) ([]hq.SendView, error)
	Transitions(ctx context.Context, node string, limit int64) ([]hq.TransitionView, error)
	Drifts(ctx context.Context, node string, limit int64) ([]hq.DriftView, error)
	DeclaredTexts(ctx context.Context, node string, refs []string) (map[string]string, error)
	Retry(ctx context.Context, node, module, resource string, ifMatch *int64) (int64, error)
	Take(ctx context.Context, node, module string, ifMatch *int64) (int64, error)

	PageRollouts(ctx context.Context, f db.RolloutFilter) (db.RolloutPage, error)
	GetRollout(ctx context.Context, id int64) (hq.Rollout, error)
	RolloutSummary(ctx context.Context, id int64) (hq.Rollout, error)
	RolloutWaves(ctx context.Context, id int64) ([]db.RolloutWave, error)
	PageRolloutNodes(ctx context.Context, id int64, after string, limit int) (db.RolloutNodePage, error)
	NodesNamed(ctx context.Context, names []string) ([]hq.NodeView, error)
	RolloutTransitions(ctx context.Context, id int64) ([]db.RolloutTransition, error)
	PauseRollout(ctx context.Context, id int64) (hq.Rollout, error)
	ResumeRollout(ctx context.Context, id int64) (hq.Rollout, error)
	PromoteRollout(ctx context.Context, id int64) (hq.Rollout, error)
	RollbackPlacement(ctx context.Context, placement string, revision int64) (hq.Rollout, error)
	AbortRollout(ctx context.Context, id int64) (hq.Rollout, error)

	PagePlacements(ctx context.Context, after string, limit int) (db.PlacementPage, error)
	PlacementSummary(ctx context.Context, name string) (hq.Placement, error)
	PlacementSelector(ctx context.Context, name string) (string, error)
	LatestRollouts(ctx context.Context, placements []string) (map[string]hq.Rollout, error)

	PageModules(ctx context.Context, after string, limit int) (db.ModulePage, error)
	// Secrets are every secret as hq.SecretView shows it: never a value.
	Secrets(ctx context.Context) ([]hq.SecretView, error)
	GetModuleSummary(ctx context.Context, name string) (db.ModuleSummary, error)
	PlacementsOfModule(ctx context.Context, module string) ([]hq.Placement, error)
	AssignedNodes(ctx context.Context, module string) ([]string, error)
	PageRevisions(ctx context.Context, module string, before int64, limit int) (db.RevisionPage, error)
	GetRevision(ctx context.Context, module string, revision int64) (db.Revision, error)
}

// UI holds the parsed templates and what the pages read.
type UI struct {
	store Store
	auth  auth
	log   *slog.Logger
	// Now is the clock the relative times are measured from; tests replace it.
	Now func() time.Time
	// Polls, when set, says how many hosts hold a long-poll on this controller and how many
	// poll on their interval instead (HQ_MAX_POLLS): the mesh page shows both.
	Polls func() (waiting, polling int)
	// Guesses, when set, bounds the wrong tokens one address may send (the API's bearer
	// tokens and sign-ins alike): past it the address is answered 429.
	Guesses *guesses.Limiter
	// OIDC, when set, signs people in through an OpenID Connect provider beside the token.
	OIDC    *OIDC
	pages   map[string]*template.Template
	history historyCache
}

// pageNames are the templates of the pages, each parsed with the layout.
var pageNames = []string{"mesh", "node", "login", "message", "rollouts", "rollout", "placements", "placement",
	"modules", "module", "modulenodes", "revision", "diff", "secrets", "audit"}

// New parses every template once, so a broken template fails at start rather than on a page
// an operator opens during an incident.
func New(store Store, adminToken string, log *slog.Logger) (*UI, error) {
	u := &UI{store: store, auth: newAuth(adminToken), log: log, Now: time.Now, pages: map[string]*template.Template{}}
	for _, page := range pageNames {
		t, err := template.ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+page+".html")
		if err != nil {
			return nil, fmt.Errorf("webui: parse %s: %w", page, err)
		}
		u.pages[page] = t
	}
	return u, nil
}

// Routes mounts the pages on r: /login is open, everything else wants the operator token; a
// form that signs in or out, or acts, is refused when another site sent it, and one that acts
// also without the session's token.
func (u *UI) Routes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(headers)
		r.Get("/login", u.loginForm)
		r.With(u.sameOrigin).Post("/login", u.login)
		r.With(u.sameOrigin).Post("/logout", u.logout)
		r.Get("/auth/login", u.oidcLogin)
		r.Get("/auth/callback", u.oidcCallback)
		r.Group(func(r chi.Router) {
			r.Use(u.operatorOnly)
			r.Get("/", u.mesh)
			r.Get("/nodes/{node}", u.node)
			r.Get("/rollouts", u.rollouts)
			r.Get("/rollouts/{rollout}", u.rollout)
			r.Get("/placements", u.placements)
			r.Get("/placements/{placement}", u.placement)
			r.Get("/modules", u.modules)
			r.Get("/modules/{module}", u.module)
			r.Get("/modules/{module}/nodes", u.moduleNodes)
			r.Get("/modules/{module}/revisions/{revision}", u.revision)
			r.Get("/modules/{module}/diff", u.diff)
			r.Get("/secrets", u.secrets)
			r.Get("/audit", u.audit)
			r.Group(func(r chi.Router) {
				r.Use(u.sameOrigin, u.checkCSRF, u.authorize)
				r.Post("/nodes/{node}/resources/{module}/{resource}/retry", u.retry)
				r.Post("/nodes/{node}/assignments/{module}/take", u.take)
				r.Post("/rollouts/{rollout}/pause", u.pause)
				r.Post("/rollouts/{rollout}/resume", u.resume)
				r.Post("/rollouts/{rollout}/promote", u.promote)
				r.Post("/placements/{placement}/rollback", u.rollback)
				r.Post("/rollouts/{rollout}/abort", u.abort)
			})
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

// chrome is what the frame around every page shows: the title, whether the page reloads
// itself, the navigation of a signed-in operator, the result of the action that led here,
// and the token the page's forms carry.
type chrome struct {
	Title   string
	Refresh int
	// Section names the part of the navigation the page belongs to.
	Section  string
	SignedIn bool
	// Who is the signed-in person the navigation names.
	Who   hq.Identity
	Flash string
	CSRF  string
	// Onward makes the page move on to the mesh at once: after a provider's sign-in, whose
	// redirects began on another site, a browser withholds the strict session cookie until
	// hq's own page navigates.
	Onward bool
}

func (c *chrome) frame() *chrome { return c }

// framed is a page with a chrome, which render fills in.
type framed interface{ frame() *chrome }

// render executes a page into a buffer and only then writes it, so a template error answers
// 500 instead of half a page.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	if f, ok := data.(framed); ok {
		c := f.frame()
		c.Who, c.SignedIn = hq.IdentityFrom(r.Context())
		if c.SignedIn {
			c.CSRF = u.csrfToken(r)
		}
		c.Flash = takeFlash(w, r)
	}
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

// fail answers an error: a coded one (a missing node, a bad filter, a rollout no longer
// paused) with its message, which is written to be shown; anything else a 500 whose detail
// goes only to the log.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, err error) {
	noteDetail(r, errMessage(err))
	if status := hq.ErrorCode(err).HTTPStatus(); status != http.StatusInternalServerError {
		title := "not found"
		if status != http.StatusNotFound {
			title = "refused"
		}
		u.render(w, r, status, "message", &messagePage{chrome: chrome{Title: title}, Message: errMessage(err)})
		return
	}
	u.log.ErrorContext(r.Context(), "webui: store", "path", r.URL.Path, "err", err)
	u.render(w, r, http.StatusInternalServerError, "message", &messagePage{chrome: chrome{Title: "error"}, Message: "the store could not be read; see the controller's log"})
}
