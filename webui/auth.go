package webui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/bearer"
	"github.com/meshhq/hq/internal/guesses"
)

const (
	cookieName = "hq_session"
	// sessionFor bounds a browser login; after it the operator types the token again.
	sessionFor = 12 * time.Hour
)

// auth checks an operator's token however a request carries it: basic auth (any user name,
// the token as password) so curl -u works, a bearer header as the API takes, or a session
// cookie set by the login form or by a provider's sign-in (oidcflow.go). A token is
// HQ_ADMIN_TOKEN (the bootstrap admin) or an operator's.
type auth struct {
	token []byte
}

func newAuth(token string) auth { return auth{token: []byte(token)} }

func (a auth) bootstrap(token string) bool {
	return len(a.token) > 0 && subtle.ConstantTimeCompare([]byte(token), a.token) == 1
}

// secret is what the store keeps a session under: the cookie's random id bound to
// HQ_ADMIN_TOKEN, so a new bootstrap token (or none) ends every session, as signing out
// ends one. The cookie is the id alone; who the session is, the row says.
func (a auth) secret(id string) string {
	m := hmac.New(sha256.New, a.token)
	m.Write([]byte("hq webui session " + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// identify finds whose token this is, and whether it may be used now.
func (u *UI) identify(r *http.Request, token string) (hq.Identity, bool, error) {
	if u.auth.bootstrap(token) {
		return hq.Identity{Operator: hq.BootstrapAdmin, Role: hq.RoleAdmin}, true, nil
	}
	if !strings.HasPrefix(token, "hqo_") {
		return hq.Identity{}, false, nil
	}
	c, err := u.store.CheckOperatorToken(r.Context(), token)
	return c.Identity, c.Valid, err
}

// check reports whether the request carries any credentials, and whose they are when they
// are good.
func (u *UI) check(r *http.Request) (present bool, id hq.Identity, ok bool, err error) {
	if _, pass, has := r.BasicAuth(); has {
		id, ok, err := u.identify(r, pass)
		return true, id, ok, err
	}
	if t := bearer.Token(r); t != "" {
		id, ok, err := u.identify(r, t)
		return true, id, ok, err
	}
	if c, err := r.Cookie(cookieName); err == nil {
		id, ok, err := u.store.Session(r.Context(), u.auth.secret(c.Value))
		return true, id, ok, err
	}
	return false, hq.Identity{}, false, nil
}

// operatorOnly admits an operator, or a person the provider signed in. Without good
// credentials it answers 401 with the sign-in page and no WWW-Authenticate: Basic, which
// would open a browser's own dialog; basic credentials a client sends (curl -u) are still
// taken.
func (u *UI) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.guessing(w, r) {
			return
		}
		present, id, ok, err := u.check(r)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		if ok {
			id.Via, id.Source = hq.ViaPage, guesses.Source(r)
			next.ServeHTTP(w, r.WithContext(hq.WithIdentity(r.Context(), id)))
			return
		}
		page := u.loginPage()
		if present {
			u.Guesses.Failed(guesses.Source(r))
			page.Refused = "Those credentials were not recognised, were revoked or expired, or the session has ended: sign in again."
		}
		u.render(w, r, http.StatusUnauthorized, "login", page)
	})
}

// sameOrigin refuses a form post that another site made the browser send: signing in or out,
// and every action, is the operator's own act. A browser says where a request comes from in
// Sec-Fetch-Site and Origin; when either is there it must name this site. curl sends neither
// and is let through, as it carries no cookie it did not choose to.
func (u *UI) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := r.Header.Get("Sec-Fetch-Site")
		crossSite := site != "" && site != "same-origin" && site != "none"
		if o := r.Header.Get("Origin"); o != "" {
			ou, err := url.Parse(o)
			crossSite = crossSite || err != nil || ou.Host != r.Host
		}
		if crossSite {
			u.render(w, r, http.StatusForbidden, "message", &messagePage{chrome: chrome{Title: "refused"},
				Message: "This form was sent from another site; use hq's own pages."})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loginPage is the sign-in page: the token form, and beside it the provider's button when
// one is configured. Refused says why the last attempt was turned away, in hq's own words.
type loginPage struct {
	chrome
	Failed bool
	// Provider is the host of the OpenID Connect issuer; "" when there is none.
	Provider string
	Refused  string
}

func (u *UI) loginPage() *loginPage {
	p := &loginPage{chrome: chrome{Title: "sign in"}}
	if u.OIDC != nil {
		p.Provider = u.OIDC.host()
	}
	return p
}

func (u *UI) loginForm(w http.ResponseWriter, r *http.Request) {
	u.render(w, r, http.StatusOK, "login", u.loginPage())
}

// login opens a session for the right token and sets its random id as the cookie; it never
// redirects anywhere but /, so it cannot be used to send an operator off the site.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	if u.guessing(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	var who hq.Identity
	ok := false
	if err := r.ParseForm(); err == nil {
		if who, ok, err = u.identify(r, r.PostFormValue("token")); err != nil {
			u.fail(w, r, err)
			return
		}
	}
	if !ok {
		u.Guesses.Failed(guesses.Source(r))
		page := u.loginPage()
		page.Failed = true
		u.render(w, r, http.StatusUnauthorized, "login", page)
		return
	}
	who.SignIn = hq.SignInToken
	if u.openSession(w, r, who) {
		http.Redirect(w, r, "/", http.StatusSeeOther)
	}
}

// openSession records a session for who and sets its random id as the cookie; it reports
// whether it did, and has answered the request when it did not.
func (u *UI) openSession(w http.ResponseWriter, r *http.Request, who hq.Identity) bool {
	id := rand.Text()
	expires := u.Now().Add(sessionFor)
	if err := u.store.CreateSession(r.Context(), u.auth.secret(id), expires, who); err != nil {
		u.fail(w, r, err)
		return false
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	return true
}

// logout ends the session on the server, so a copy of the cookie is refused from now on, and
// clears the cookie.
func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		if err := u.store.DeleteSession(r.Context(), u.auth.secret(c.Value)); err != nil {
			u.fail(w, r, err)
			return
		}
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// guessing answers 429 a request from an address that sent too many wrong tokens (Guesses),
// before its credentials are looked at; it reports whether it did.
func (u *UI) guessing(w http.ResponseWriter, r *http.Request) bool {
	blocked, after := u.Guesses.Blocked(guesses.Source(r))
	if blocked {
		guesses.SetRetryAfter(w, after)
		u.render(w, r, http.StatusTooManyRequests, "message", &messagePage{chrome: chrome{Title: "too many tries"},
			Message: "Too many wrong tokens came from this address; try again in a minute."})
	}
	return blocked
}
