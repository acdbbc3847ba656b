package webui

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq/internal/guesses"
)

func TestAuth(t *testing.T) {
	b := setup(t)
	for _, tc := range []struct {
		name string
		set  func(*http.Request)
		want int
	}{
		{"no credentials", func(*http.Request) {}, http.StatusUnauthorized},
		{"basic auth", func(r *http.Request) { r.SetBasicAuth("anyone", token) }, http.StatusOK},
		{"basic auth, empty user", func(r *http.Request) { r.SetBasicAuth("", token) }, http.StatusOK},
		{"basic auth, wrong token", func(r *http.Request) { r.SetBasicAuth("op", token+"x") }, http.StatusUnauthorized},
		{"basic auth, token as user name", func(r *http.Request) { r.SetBasicAuth(token, "") }, http.StatusUnauthorized},
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }, http.StatusOK},
		{"bearer, wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, http.StatusUnauthorized},
		{"bearer, scheme in lower case", func(r *http.Request) { r.Header.Set("Authorization", "bearer "+token) }, http.StatusOK},
		{"forged cookie", func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: cookieName, Value: "99999999999.forged"})
		}, http.StatusUnauthorized},
		{"the token itself as cookie", func(r *http.Request) {
			r.AddCookie(&http.Cookie{Name: cookieName, Value: token})
		}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/", "/nodes/none"} {
				req := httptest.NewRequest("GET", path, nil)
				tc.set(req)
				w := httptest.NewRecorder()
				b.handler.ServeHTTP(w, req)
				want := tc.want
				if want == http.StatusOK && path != "/" {
					want = http.StatusNotFound // past auth, no such node
				}
				if w.Code != want {
					t.Fatalf("GET %s: %d, want %d", path, w.Code, want)
				}
				// No challenge: a browser would answer it with its own dialog, over the page.
				if w.Code == http.StatusUnauthorized {
					if h := w.Header().Get("WWW-Authenticate"); h != "" {
						t.Fatalf("401 with a challenge: %q", h)
					}
					if !strings.Contains(w.Body.String(), `action="/login"`) {
						t.Fatalf("401 without the sign-in form:\n%s", w.Body.String())
					}
				}
			}
		})
	}
}

func login(t *testing.T, b *bundle, tok string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, req)
	return w
}

func TestCookieLogin(t *testing.T) {
	b := setup(t)
	w := login(t, b, token)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
		t.Fatalf("login: %d to %q", w.Code, w.Header().Get("Location"))
	}
	cookies := w.Result().Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login set %d cookies", len(cookies))
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/", c)
	}
	if strings.Contains(c.Value, token) {
		t.Fatalf("the cookie holds the token: %q", c.Value)
	}
	get := func() int {
		req := httptest.NewRequest("GET", "/", nil)
		req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		code, _ := b.do(req)
		return code
	}
	if code := get(); code != http.StatusOK {
		t.Fatalf("GET / with the session cookie: %d", code)
	}
	// A session opened under another token (the token was rotated) is refused.
	rotated, err := New(b.store, "rotated", b.ui.log)
	if err != nil {
		t.Fatal(err)
	}
	rotated.Now = b.clock.Now
	r := chi.NewRouter()
	rotated.Routes(r)
	lw := httptest.NewRecorder()
	lreq := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"token": {"rotated"}}.Encode()))
	lreq.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.ServeHTTP(lw, lreq)
	if lw.Code != http.StatusSeeOther || len(lw.Result().Cookies()) != 1 {
		t.Fatalf("login with the rotated token: %d", lw.Code)
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(lw.Result().Cookies()[0])
	if code, _ := b.do(req); code != http.StatusUnauthorized {
		t.Fatalf("a session of another token: %d", code)
	}
	b.clock.Advance(sessionFor)
	if code := get(); code != http.StatusUnauthorized {
		t.Fatalf("GET / with an expired session: %d", code)
	}
}

func TestWrongTokenLogin(t *testing.T) {
	b := setup(t)
	w := login(t, b, "wrong")
	if w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) != 0 {
		t.Fatalf("wrong token: %d with cookies %v", w.Code, w.Result().Cookies())
	}
	if !strings.Contains(w.Body.String(), "not recognised") {
		t.Fatal("the login form does not say the token was wrong")
	}
	if w := login(t, b, ""); w.Code != http.StatusUnauthorized {
		t.Fatalf("empty token: %d", w.Code)
	}
	if code, body := b.do(httptest.NewRequest("GET", "/login", nil)); code != http.StatusOK || !strings.Contains(body, `name="token"`) {
		t.Fatalf("GET /login: %d", code)
	}
}

func TestNoPageShowsANodeToken(t *testing.T) {
	b := setup(t)
	tok := b.node(t, "web-1")
	b.module(t, "app", file("conf"))
	b.assign(t, "web-1", "app")
	b.report(t, "web-1", result("app", "conf", "applied"))
	for _, path := range []string{"/", "/nodes/web-1"} {
		code, body := b.get(t, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		if strings.Contains(body, tok) {
			t.Fatalf("GET %s shows the node's token", path)
		}
	}
}

// sessionCookie logs in and returns the session cookie set.
func sessionCookie(t *testing.T, b *bundle) *http.Cookie {
	t.Helper()
	w := login(t, b, token)
	if w.Code != http.StatusSeeOther || len(w.Result().Cookies()) != 1 {
		t.Fatalf("login: %d with %d cookie(s)", w.Code, len(w.Result().Cookies()))
	}
	return w.Result().Cookies()[0]
}

// logout posts the sign-out form with cookie c and the given headers.
func logout(b *bundle, c *http.Cookie, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/logout", nil)
	if c != nil {
		req.AddCookie(c)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, req)
	return w
}

func withCookie(b *bundle, c *http.Cookie) int {
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	code, _ := b.do(req)
	return code
}

// Signing out ends the session on the server: a copy of the cookie kept from before is refused.
func TestLogoutEndsTheSession(t *testing.T) {
	b := setup(t)
	kept := sessionCookie(t, b)
	other := sessionCookie(t, b)
	if code := withCookie(b, kept); code != http.StatusOK {
		t.Fatalf("GET / with the session cookie: %d", code)
	}
	w := logout(b, kept)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/login" {
		t.Fatalf("logout: %d to %q", w.Code, w.Header().Get("Location"))
	}
	if cs := w.Result().Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 {
		t.Fatalf("logout does not clear the cookie: %v", cs)
	}
	if code := withCookie(b, kept); code != http.StatusUnauthorized {
		t.Fatalf("the copied cookie after sign-out: %d, want 401", code)
	}
	if code := withCookie(b, other); code != http.StatusOK {
		t.Fatalf("another browser's session after this one signed out: %d", code)
	}
	if w := logout(b, kept); w.Code != http.StatusSeeOther {
		t.Fatalf("signing out twice: %d", w.Code)
	}
	if w := logout(b, nil); w.Code != http.StatusSeeOther {
		t.Fatalf("signing out without a cookie: %d", w.Code)
	}
}

// A sign-in or sign-out form that another site made the browser post is refused, and changes
// nothing; the browser's own form, and curl, are let through.
func TestCrossSitePostsRefused(t *testing.T) {
	b := setup(t)
	for _, tc := range []struct {
		name    string
		headers []string
		ok      bool
	}{
		{"no browser headers (curl)", nil, true},
		{"same origin", []string{"Sec-Fetch-Site", "same-origin", "Origin", "http://example.com"}, true},
		{"typed by the user", []string{"Sec-Fetch-Site", "none"}, true},
		{"origin only, this host", []string{"Origin", "http://example.com"}, true},
		{"cross-site", []string{"Sec-Fetch-Site", "cross-site"}, false},
		{"same site, another origin", []string{"Sec-Fetch-Site", "same-site"}, false},
		{"another origin", []string{"Origin", "https://evil.example"}, false},
		{"another port", []string{"Origin", "http://example.com:8081"}, false},
		{"opaque origin", []string{"Origin", "null"}, false},
		{"same origin claimed, another Origin", []string{"Sec-Fetch-Site", "same-origin", "Origin", "https://evil.example"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// httptest requests are for example.com.
			if tc.ok && tc.headers == nil {
				// A browser sends "Origin: null" with a form post from a page whose referrer
				// policy is no-referrer, which is refused: the pages must not have that policy.
				if p := login(t, b, "wrong").Header().Get("Referrer-Policy"); p != "same-origin" {
					t.Fatalf("Referrer-Policy %q, want same-origin", p)
				}
			}
			w := login(t, b, token, tc.headers...)
			want := http.StatusSeeOther
			if !tc.ok {
				want = http.StatusForbidden
			}
			if w.Code != want {
				t.Fatalf("login: %d, want %d", w.Code, want)
			}
			if !tc.ok && len(w.Result().Cookies()) != 0 {
				t.Fatal("a refused login set a cookie")
			}
			c := sessionCookie(t, b)
			if w := logout(b, c, tc.headers...); w.Code != want {
				t.Fatalf("logout: %d, want %d", w.Code, want)
			}
			if ended := withCookie(b, c) == http.StatusUnauthorized; ended != tc.ok {
				t.Fatalf("after the logout post the session ended = %v, want %v", ended, tc.ok)
			}
		})
	}
}

// Wrong tokens from one address, signed in with or sent to a page, past the bound are
// answered 429 before the token is looked at: the right one too, from that address, while
// another address signs in.
func TestWrongSignInsFromOneAddressAreBounded(t *testing.T) {
	b := setup(t)
	b.ui.Guesses = guesses.New(3)
	for range 2 {
		if w := login(t, b, "wrong"); w.Code != http.StatusUnauthorized {
			t.Fatalf("a wrong sign-in: %d", w.Code)
		}
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.SetBasicAuth("op", "wrong")
	if code, _ := b.do(req); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token for a page: %d", code)
	}
	for _, tok := range []string{"wrong", token} {
		w := login(t, b, tok)
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || len(w.Result().Cookies()) != 0 {
			t.Fatalf("sign-in past the bound: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
		}
	}
	if code, _ := b.get(t, "/"); code != http.StatusTooManyRequests {
		t.Fatalf("a page past the bound: %d", code)
	}
	other := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	other.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	other.RemoteAddr = "192.0.2.7:4000"
	if code, _ := b.do(other); code != http.StatusSeeOther {
		t.Fatalf("another address's sign-in: %d", code)
	}
}
