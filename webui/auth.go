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
	"time"

	"github.com/meshhq/hq/internal/bearer"
	"github.com/meshhq/hq/internal/guesses"
)

const (
	cookieName = "hq_session"
	// sessionFor bounds a browser login; after it the operator types the token again.
	sessionFor = 12 * time.Hour
)

// auth checks the operator's token however a request carries it: basic auth (any user name,
// the token as password) so curl -u works, a bearer header as the API takes, or a session
// cookie set by the login form.
type auth struct {
	token []byte
}

func newAuth(token string) auth { return auth{token: []byte(token)} }

func (a auth) valid(token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), a.token) == 1
}

// secret is what the store keeps a session under: the cookie's random id bound to the operator
// token, so a session outlives neither its row (signing out) nor the token it was opened with.
func (a auth) secret(id string) string {
	m := hmac.New(sha256.New, a.token)
	m.Write([]byte("hq webui session " + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// check reports whether the request carries any credentials, and whether they are the
// operator's.
func (u *UI) check(r *http.Request) (present, ok bool, err error) {
	if _, pass, has := r.BasicAuth(); has {
		return true, u.auth.valid(pass), nil
	}
	if t := bearer.Token(r); t != "" {
		return true, u.auth.valid(t), nil
	}
	if c, err := r.Cookie(cookieName); err == nil {
		ok, err := u.store.SessionValid(r.Context(), u.auth.secret(c.Value))
		return true, ok, err
	}
	return false, false, nil
}

// operatorOnly admits the operator. Without credentials it asks for basic auth, which both a
// browser and curl understand; the body points a browser user at the login form instead.
func (u *UI) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.guessing(w, r) {
			return
		}
		present, ok, err := u.check(r)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		if ok {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), operatorKey{}, true)))
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="hq", charset="UTF-8"`)
		msg := "Sign in with the operator token: as the password of basic auth (any user name), as a bearer token, or with the login form."
		if present {
			u.Guesses.Failed(guesses.Source(r))
			msg = "The token was not recognised. " + msg
		}
		u.render(w, r, http.StatusUnauthorized, "message", &messagePage{chrome: chrome{Title: "sign in"}, Message: msg, Login: true})
	})
}

// operatorKey marks a request's context once operatorOnly admitted it.
type operatorKey struct{}

// signedIn reports whether the request is the operator's, as operatorOnly found.
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
	if err := r.ParseForm(); err != nil || !u.auth.valid(r.PostFormValue("token")) {
		u.Guesses.Failed(guesses.Source(r))
		u.render(w, r, http.StatusUnauthorized, "login", &loginPage{chrome: chrome{Title: "sign in"}, Failed: true})
		return
	}
	id := rand.Text()
	expires := u.Now().Add(sessionFor)
	if err := u.store.CreateSession(r.Context(), u.auth.secret(id), expires); err != nil {
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
