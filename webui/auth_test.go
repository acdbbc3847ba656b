package webui

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
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
				if w.Code == http.StatusUnauthorized && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
					t.Fatalf("401 without a basic challenge: %q", w.Header().Get("WWW-Authenticate"))
				}
			}
		})
	}
}

func login(t *testing.T, b *bundle, tok string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", "/login", strings.NewReader(url.Values{"token": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
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
	// A session signed with another token (the token was rotated) is refused.
	other := newAuth("rotated").cookie(b.clock.now().Add(time.Hour))
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: other})
	if code, _ := b.do(req); code != http.StatusUnauthorized {
		t.Fatalf("a cookie of another token: %d", code)
	}
	b.clock.advance(sessionFor)
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
