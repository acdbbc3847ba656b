package webui

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/meshhq/hq"
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

// check reports whether the request carries any credentials, and whether they are the
// operator's.
func (a auth) check(r *http.Request, now time.Time) (present, ok bool) {
	if _, pass, has := r.BasicAuth(); has {
		return true, a.valid(pass)
	}
	if t := hq.BearerToken(r.Header.Get("Authorization")); t != "" {
		return true, a.valid(t)
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return true, a.session(c.Value, now)
	}
	return false, false
}

// cookie returns a session value: an expiry and an HMAC of it keyed by the token. It proves
// the token was known without holding it, survives a restart, is accepted by every controller
// sharing the token, and dies when the token changes.
func (a auth) cookie(expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return exp + "." + a.mac(exp)
}

func (a auth) session(value string, now time.Time) bool {
	exp, mac, ok := strings.Cut(value, ".")
	if !ok {
		return false
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || now.Unix() >= unix {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(a.mac(exp)))
}

func (a auth) mac(exp string) string {
	m := hmac.New(sha256.New, a.token)
	m.Write([]byte("hq webui session " + exp))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// operatorOnly admits the operator. Without credentials it asks for basic auth, which both a
// browser and curl understand; the body points a browser user at the login form instead.
func (u *UI) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		present, ok := u.auth.check(r, u.Now())
		if ok {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="hq", charset="UTF-8"`)
		msg := "Sign in with the operator token: as the password of basic auth (any user name), as a bearer token, or with the login form."
		if present {
			msg = "The token was not recognised. " + msg
		}
		u.render(w, r, http.StatusUnauthorized, "message", messagePage{Title: "sign in", Message: msg, Login: true})
	})
}

type loginPage struct {
	Title   string
	Refresh int
	Failed  bool
}

func (u *UI) loginForm(w http.ResponseWriter, r *http.Request) {
	u.render(w, r, http.StatusOK, "login", loginPage{Title: "sign in"})
}

// login sets the session cookie for the right token; it never redirects anywhere but /, so it
// cannot be used to send an operator off the site.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil || !u.auth.valid(r.PostFormValue("token")) {
		u.render(w, r, http.StatusUnauthorized, "login", loginPage{Title: "sign in", Failed: true})
		return
	}
	expires := u.Now().Add(sessionFor)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: u.auth.cookie(expires), Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
