package webui

import (
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

// secret is what the store keeps a session under: the cookie's value (its random id, and the
// identity of a provider's sign-in) bound to the operator token, so a session outlives neither
// its row (signing out) nor the token it was opened with, and its identity cannot be altered.
func (a auth) secret(id string) string {
	m := hmac.New(sha256.New, a.token)
	m.Write([]byte("hq webui session " + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// check reports whether the request carries any credentials, and who they admit, if anyone.
func (u *UI) check(r *http.Request) (present bool, who Identity, ok bool, err error) {
	if _, pass, has := r.BasicAuth(); has {
		return true, tokenIdentity, u.auth.valid(pass), nil
	}
	if t := bearer.Token(r); t != "" {
		return true, tokenIdentity, u.auth.valid(t), nil
	}
	if c, err := r.Cookie(cookieName); err == nil {
		who, readable := cookieIdentity(c.Value)
		if !readable {
			return true, Identity{}, false, nil
		}
		ok, err := u.store.SessionValid(r.Context(), u.auth.secret(c.Value))
		return true, who, ok, err
	}
	return false, Identity{}, false, nil
}

// operatorOnly admits whoever signed in. Without credentials it answers 401 with the sign-in
// page and no basic-auth challenge, so a browser shows the page rather than its own dialog;
// curl -u sends basic auth unasked and is let in all the same.
func (u *UI) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.guessing(w, r) {
			return
		}
		present, who, ok, err := u.check(r)
		if err != nil {
			u.fail(w, r, err)
			return
		}
		if ok {
			next.ServeHTTP(w, r.WithContext(withIdentity(r.Context(), who)))
			return
		}
		page := u.loginPage()
		if present {
			u.Guesses.Failed(guesses.Source(r))
			page.Refused = "Those credentials were not recognised, or the session has ended: sign in again."
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
	if err := r.ParseForm(); err != nil || !u.auth.valid(r.PostFormValue("token")) {
		u.Guesses.Failed(guesses.Source(r))
		page := u.loginPage()
		page.Failed = true
		u.render(w, r, http.StatusUnauthorized, "login", page)
		return
	}
	if u.openSession(w, r, tokenIdentity) {
		http.Redirect(w, r, "/", http.StatusSeeOther)
	}
}

// openSession records a session for who and sets its cookie; it reports whether it did, and
// has answered the request when it did not.
func (u *UI) openSession(w http.ResponseWriter, r *http.Request, who Identity) bool {
	value := sessionCookieValue(rand.Text(), who)
	expires := u.Now().Add(sessionFor)
	if err := u.store.CreateSession(r.Context(), u.auth.secret(value), expires); err != nil {
		u.fail(w, r, err)
		return false
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: value, Path: "/", Expires: expires,
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
