package webui

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// testIssuer is an OpenID Connect provider reduced to what a callback reads: discovery, keys
// and a token endpoint whose ID token claims the test writes, given the nonce hq sent.
type testIssuer struct {
	*httptest.Server
	key    *rsa.PrivateKey
	claims func(nonce string) map[string]any
	nonce  string
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss := &testIssuer{key: key}
	mux := http.NewServeMux()
	iss.Server = httptest.NewServer(mux)
	t.Cleanup(iss.Close)
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": iss.URL, "authorization_endpoint": iss.URL + "/authorize",
			"token_endpoint": iss.URL + "/token", "jwks_uri": iss.URL + "/keys", "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if r.PostFormValue("code_verifier") == "" || r.PostFormValue("code") != "the-code" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 60,
			"id_token": iss.sign(t, iss.claims(iss.nonce))})
	})
	return iss
}

func (iss *testIssuer) sign(t *testing.T, claims map[string]any) string {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: iss.key, KeyID: "k1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(claims)
	obj, err := signer.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := obj.CompactSerialize()
	return s
}

// good is a token the pages take: alice, a deployer.
func (iss *testIssuer) good(nonce string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": iss.URL, "sub": "u-1", "aud": "hq", "exp": now.Add(time.Minute).Unix(), "iat": now.Unix(),
		"nonce": nonce, "preferred_username": "alice", "groups": []string{"staff", "hq-deployers"}}
}

func oidcSetup(t *testing.T) (*bundle, *testIssuer) {
	t.Helper()
	return oidcOn(t, setup(t))
}

// oidcOn gives b's pages a provider, the test issuer.
func oidcOn(t *testing.T, b *bundle) (*bundle, *testIssuer) {
	t.Helper()
	iss := newTestIssuer(t)
	roles, err := ParseRoles("hq-admins=admin,hq-deployers=deployer,hq-viewers=viewer")
	if err != nil {
		t.Fatal(err)
	}
	o, err := NewOIDC(OIDCConfig{Issuer: iss.URL, ClientID: "hq", ClientSecret: "s", RoleClaim: "groups", Roles: roles},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	b.ui.OIDC = o
	return b, iss
}

// begin follows /auth/login: the flow cookie it sets and the state of the provider URL.
func begin(t *testing.T, b *bundle, iss *testIssuer) (*http.Cookie, string) {
	t.Helper()
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, httptest.NewRequest("GET", "/auth/login", nil))
	if w.Code != http.StatusFound {
		t.Fatalf("GET /auth/login: %d %s", w.Code, w.Body)
	}
	to, err := url.Parse(w.Header().Get("Location"))
	if err != nil || !strings.HasPrefix(to.String(), iss.URL+"/authorize?") {
		t.Fatalf("GET /auth/login goes to %q", w.Header().Get("Location"))
	}
	q := to.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" || q.Get("client_id") != "hq" {
		t.Fatalf("the provider URL lacks PKCE, nonce or client: %s", to)
	}
	iss.nonce = q.Get("nonce")
	for _, c := range w.Result().Cookies() {
		if c.Name == flowCookie {
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.MaxAge <= 0 || c.MaxAge > 600 {
				t.Fatalf("flow cookie %+v: want HttpOnly, SameSite=Lax, short-lived", c)
			}
			return c, q.Get("state")
		}
	}
	t.Fatal("GET /auth/login set no flow cookie")
	return nil, ""
}

// refusal is the reason a sign-in page gives, for a failure's message.
func refusal(body string) string {
	if _, after, ok := strings.Cut(body, `id="refused">`); ok {
		before, _, _ := strings.Cut(after, "<")
		return html.UnescapeString(before)
	}
	return "(no reason on the page)"
}

func callback(b *bundle, query string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/auth/callback?"+query, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, req)
	return w
}

func openedSession(w *httptest.ResponseRecorder) *http.Cookie {
	for _, c := range w.Result().Cookies() {
		if c.Name == cookieName && c.Value != "" {
			return c
		}
	}
	return nil
}

func TestOIDCSignIn(t *testing.T) {
	b, iss := oidcSetup(t)
	iss.claims = iss.good
	flow, state := begin(t, b, iss)
	w := callback(b, "code=the-code&state="+url.QueryEscape(state), flow)
	session := openedSession(w)
	if w.Code != http.StatusOK || session == nil || !strings.Contains(w.Body.String(), `http-equiv="refresh"`) {
		t.Fatalf("callback: %d, session %v\n%s", w.Code, session, w.Body)
	}
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(session)
	code, body := b.do(req)
	if code != http.StatusOK || !strings.Contains(body, "signed in as alice (deployer)") {
		t.Fatalf("GET / with the session: %d\n%s", code, body)
	}
	// The cookie is the random id alone; the row says who it is.
	if strings.Contains(session.Value, ".") || strings.Contains(session.Value, "alice") {
		t.Fatalf("the session cookie carries more than its id: %q", session.Value)
	}
	who, ok, err := b.store.Session(context.Background(), b.ui.auth.secret(session.Value))
	want := hq.Identity{Operator: "alice", Role: hq.RoleDeployer, SignIn: hq.SignInOIDC}
	if err != nil || !ok || who != want {
		t.Fatalf("the session's row: %+v %v %v, want %+v", who, ok, err, want)
	}
	// A flow is used once.
	if w := callback(b, "code=the-code&state="+url.QueryEscape(state)); w.Code != http.StatusBadRequest {
		t.Fatalf("a second callback without the flow cookie: %d", w.Code)
	}
}

func TestOIDCCallbackRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		claims func(iss *testIssuer, nonce string) map[string]any
		query  func(state string) string
		noFlow bool
		status int
		says   string
	}{
		{name: "bad state", query: func(string) string { return "code=the-code&state=another" },
			status: http.StatusBadRequest, says: "a state this browser was not given"},
		{name: "no state", query: func(string) string { return "code=the-code" },
			status: http.StatusBadRequest, says: "a state this browser was not given"},
		{name: "no flow cookie", noFlow: true, status: http.StatusBadRequest, says: "not started in this browser"},
		{name: "provider error", query: func(string) string { return "error=access_denied&error_description=<b>x</b>" },
			status: http.StatusUnauthorized, says: "it answered access_denied"},
		{name: "no code", query: func(s string) string { return "state=" + url.QueryEscape(s) },
			status: http.StatusBadRequest, says: "without a code"},
		{name: "missing nonce", claims: func(iss *testIssuer, n string) map[string]any {
			c := iss.good(n)
			delete(c, "nonce")
			return c
		}, status: http.StatusUnauthorized, says: "does not carry this sign-in's nonce"},
		{name: "another nonce", claims: func(iss *testIssuer, n string) map[string]any {
			c := iss.good(n)
			c["nonce"] = "replayed"
			return c
		}, status: http.StatusUnauthorized, says: "does not carry this sign-in's nonce"},
		{name: "wrong audience", claims: func(iss *testIssuer, n string) map[string]any {
			c := iss.good(n)
			c["aud"] = "another-client"
			return c
		}, status: http.StatusUnauthorized, says: "issued to another client"},
		{name: "another issuer", claims: func(iss *testIssuer, n string) map[string]any {
			c := iss.good(n)
			c["iss"] = "https://elsewhere.example"
			return c
		}, status: http.StatusUnauthorized, says: "issued by another issuer"},
		{name: "expired", claims: func(iss *testIssuer, n string) map[string]any {
			c := iss.good(n)
			c["exp"] = time.Now().Add(-time.Hour).Unix()
			return c
		}, status: http.StatusUnauthorized, says: "it has expired"},
		{name: "no mapped group", claims: func(iss *testIssuer, n string) map[string]any {
			c := iss.good(n)
			c["groups"] = []string{"contractors"}
			return c
		}, status: http.StatusForbidden, says: "alice is signed in at the provider, but no value of their claim groups (contractors) maps to a role"},
		{name: "groups of another type", claims: func(iss *testIssuer, n string) map[string]any {
			c := iss.good(n)
			c["groups"] = []any{"hq-deployers", 7}
			return c
		}, status: http.StatusForbidden, says: "neither a string nor a list of strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, iss := oidcSetup(t)
			iss.claims = iss.good
			if tc.claims != nil {
				iss.claims = func(n string) map[string]any { return tc.claims(iss, n) }
			}
			flow, state := begin(t, b, iss)
			q := "code=the-code&state=" + url.QueryEscape(state)
			if tc.query != nil {
				q = tc.query(state)
			}
			var cookies []*http.Cookie
			if !tc.noFlow {
				cookies = append(cookies, flow)
			}
			w := callback(b, q, cookies...)
			body := w.Body.String()
			if w.Code != tc.status || !strings.Contains(html.UnescapeString(body), tc.says) {
				t.Fatalf("callback: %d, want %d saying %q\n%s", w.Code, tc.status, tc.says, refusal(body))
			}
			if openedSession(w) != nil {
				t.Fatal("a refused callback opened a session")
			}
			if strings.Contains(body, "eyJ") || strings.Contains(body, "<b>") {
				t.Fatalf("the refusal echoes what it was sent:\n%s", body)
			}
		})
	}
}

func TestNewOIDCRefuses(t *testing.T) {
	roles, _ := ParseRoles("*=viewer")
	good := OIDCConfig{Issuer: "https://id.example", ClientID: "hq", ClientSecret: "s", RoleClaim: "groups", Roles: roles}
	for name, tc := range map[string]struct {
		change func(*OIDCConfig)
		says   string
	}{
		"plain http elsewhere":  {func(c *OIDCConfig) { c.Issuer = "http://id.example" }, "only on loopback"},
		"not a URL":             {func(c *OIDCConfig) { c.Issuer = "id.example" }, "is not an issuer URL"},
		"a query":               {func(c *OIDCConfig) { c.Issuer = "https://id.example/?a=b" }, "is not an issuer URL"},
		"no client":             {func(c *OIDCConfig) { c.ClientID = "" }, "client id is required"},
		"empty secret":          {func(c *OIDCConfig) { c.ClientSecret = "" }, "secret is empty"},
		"no roles":              {func(c *OIDCConfig) { c.Roles = RoleMap{} }, "role mapping is required"},
		"relative redirect URL": {func(c *OIDCConfig) { c.RedirectURL = "/auth/callback" }, "is not an absolute URL"},
	} {
		c := good
		tc.change(&c)
		if _, err := NewOIDC(c, nil); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %q", name, err, tc.says)
		}
	}
	for _, ok := range []string{"http://127.0.0.1:5556/dex", "http://localhost:8080", "http://[::1]:9000"} {
		if err := CheckIssuer(ok); err != nil {
			t.Errorf("CheckIssuer(%q): %v", ok, err)
		}
	}
}

// signInAs goes through the provider as name of groups and returns the session cookie.
func signInAs(t *testing.T, b *bundle, iss *testIssuer, name string, groups ...string) *http.Cookie {
	t.Helper()
	iss.claims = func(n string) map[string]any {
		c := iss.good(n)
		c["preferred_username"], c["groups"] = name, groups
		return c
	}
	flow, state := begin(t, b, iss)
	session := openedSession(callback(b, "code=the-code&state="+url.QueryEscape(state), flow))
	if session == nil {
		t.Fatalf("%s of %v was not signed in", name, groups)
	}
	return session
}

// A provider's person acts by their mapped role, by the same table as an operator, and the
// audit log names them, allowed or refused. They have no scope: a deployer may steer any
// rollout.
func TestOIDCRolesAreEnforcedAndAudited(t *testing.T) {
	b, _ := fleet(t)
	b, iss := oidcOn(t, b)
	bob := signInAs(t, b, iss, "bob", "hq-viewers")
	if w := post(b, bob, "/rollouts/1/resume", csrfOf(t, b, bob, "/rollouts/1")); w.Code != http.StatusForbidden ||
		!strings.Contains(w.Body.String(), "bob is a viewer") {
		t.Fatalf("a viewer's resume: %d\n%s", w.Code, w.Body)
	}
	if ro, err := b.store.GetRollout(context.Background(), 1); err != nil || ro.State != hq.RolloutPaused || ro.SteeredBy != "" {
		t.Fatalf("a viewer's refused resume steered rollout 1: %+v %v", ro, err)
	}
	alice := signInAs(t, b, iss, "alice", "hq-deployers")
	if w := post(b, alice, "/rollouts/1/resume", csrfOf(t, b, alice, "/rollouts/1")); w.Code != http.StatusSeeOther {
		t.Fatalf("a deployer's resume: %d\n%s", w.Code, w.Body)
	}
	if ro, err := b.store.GetRollout(context.Background(), 1); err != nil || ro.SteeredBy != "alice" || ro.Steered != "resumed" {
		t.Fatalf("rollout 1 after alice's resume: %+v %v", ro, err)
	}
	for _, tc := range []struct {
		who     string
		role    hq.Role
		outcome int
		detail  string
	}{
		{"bob", hq.RoleViewer, http.StatusForbidden, "via OIDC: bob is a viewer"},
		{"alice", hq.RoleDeployer, http.StatusSeeOther, "via OIDC"},
	} {
		p, err := b.store.ListAudit(context.Background(), db.AuditFilter{Operator: tc.who})
		if err != nil || len(p.Entries) != 1 {
			t.Fatalf("%s's audit entries: %+v %v", tc.who, p, err)
		}
		e := p.Entries[0]
		if e.Role != tc.role || e.Via != hq.ViaPage || e.Action != "rollout.resume" || e.Object != "rollout/1" ||
			e.Outcome != tc.outcome || !strings.HasPrefix(e.Detail, tc.detail) {
			t.Errorf("%s's audit entry: %+v", tc.who, e)
		}
	}
}
