package webui

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"

	"github.com/meshhq/hq/internal/bearer"
)

// csrfField is the form field that carries the token.
const csrfField = "csrf"

// csrf is the token a page's forms carry, derived from the operator token so that nobody
// without it can make one. A same-site cookie alone would not do: a browser that remembers
// basic auth sends it with a form another site posts, cookie or not.
func (a auth) csrf(binding string) string {
	m := hmac.New(sha256.New, a.token)
	m.Write([]byte("hq webui csrf " + binding))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// csrfToken is the token of the request's session: bound to the session cookie's id, so a
// token seen in one browser's page is worth nothing in another's session and ends with its
// session, or, for credentials sent with every request (basic auth, a bearer header), to those.
// The binding follows check's order, in which headers come before the cookie.
func (u *UI) csrfToken(r *http.Request) string {
	if _, _, has := r.BasicAuth(); has || bearer.Token(r) != "" {
		return u.auth.csrf("credentials")
	}
	if c, err := r.Cookie(cookieName); err == nil {
		return u.auth.csrf("session " + c.Value)
	}
	return u.auth.csrf("credentials")
}

// checkCSRF refuses, before anything is done, a form without the token of the session it
// comes with.
func (u *UI) checkCSRF(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 4096)
		err := r.ParseForm()
		if err != nil || !hmac.Equal([]byte(r.PostFormValue(csrfField)), []byte(u.csrfToken(r))) {
			u.render(w, r, http.StatusForbidden, "message", &messagePage{chrome: chrome{Title: "refused"},
				Message: "This form does not carry the token of this session, so nothing was done: reload the page and press the button again."})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// flashCookie carries the result of an action to the page it redirects to, as one of the keys
// of flashes: the page shows only text of its own, never what a request carried.
const flashCookie = "hq_flash"

// flashes are the results an action can leave, worded as the CLI says them.
var flashes = map[string]string{
	"retried":    "retrying: the resource is pending again, and the host drops its back-off for it with its next report",
	"taken":      "taken: the module adopts what it finds on the node from its next declaration",
	"paused":     "paused: the rollout starts no new wave; the nodes in flight go on",
	"promoted":   "promoted: the canaries count as proven, and the batches start without waiting for them",
	"rolledback": "rolling back: this rollout takes the placement's nodes back to the revision chosen",
	"resumed":    "resumed: the rollout is progressing again; the failures so far no longer count against its budget",
	"aborted":    "aborted: every node the rollout advanced is pinned back to the revision it had",
}

// setFlash leaves key for the next page; it lives a minute, long enough for the redirect.
func setFlash(w http.ResponseWriter, r *http.Request, key string) {
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: key, Path: "/", MaxAge: 60,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// takeFlash returns the message the request's flash names, once: the cookie is cleared, so a
// page reloading itself does not say it again.
func takeFlash(w http.ResponseWriter, r *http.Request) string {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return flashes[c.Value]
}
