package webui

import (
	"context"
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
// cookie set by the login form. A token is HQ_ADMIN_TOKEN (the bootstrap admin) or an
// operator's.
type auth struct {
	token []byte
}

func newAuth(token string) auth { return auth{token: []byte(token)} }

func (a auth) bootstrap(token string) bool {
	return len(a.token) > 0 && subtle.ConstantTimeCompare([]byte(token), a.token) == 1
}

// secret is what the store keeps a session under: the cookie's random id bound to
// HQ_ADMIN_TOKEN, so a new bootstrap token (or none) ends every session, as signing out
// ends one.
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

// operatorOnly admits an operator. Without good credentials it answers 401 with a page
// pointing at the login form, and no WWW-Authenticate: Basic, which would open a browser's
// own dialog; basic credentials a client sends are still taken.
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
			ctx := hq.WithIdentity(context.WithValue(r.Context(), operatorKey{}, true), id)
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		msg := "Sign in with an operator's token: with the login form, as a bearer token, or as the password of basic auth (any user name)."
		if present {
			u.Guesses.Failed(guesses.Source(r))
			msg = "The token was not recognised, or was revoked or expired. " + msg
		}
		u.render(w, r, http.StatusUnauthorized, "message", &messagePage{chrome: chrome{Title: "sign in"}, Message: msg, Login: true})
	})
}

// operatorKey marks a request's context once operatorOnly admitted it.
type operatorKey struct{}

// signedIn reports whether the request is an operator's, as operatorOnly found.
func signedIn(r *http.Request) bool {
	ok, _ := r.Context().Value(operatorKey{}).(bool)
	return ok
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

type loginPage struct {
	chrome
	Failed bool
}

func (u *UI) loginForm(w http.ResponseWriter, r *http.Request) {
	u.render(w, r, http.StatusOK, "login", &loginPage{chrome: chrome{Title: "sign in"}})
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
		u.render(w, r, http.StatusUnauthorized, "login", &loginPage{chrome: chrome{Title: "sign in"}, Failed: true})
		return
	}
	id := rand.Text()
	expires := u.Now().Add(sessionFor)
	if err := u.store.CreateSession(r.Context(), u.auth.secret(id), expires, who); err != nil {
		u.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: id, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
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
