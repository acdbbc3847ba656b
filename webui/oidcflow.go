package webui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/meshhq/hq"
)

const (
	// flowCookie carries a sign-in's state, nonce and PKCE verifier from /auth/login to the
	// callback. SameSite=Lax, because the provider sends the browser back from another site.
	flowCookie = "hq_oidc"
	flowPath   = "/auth/"
	// flowFor bounds the time a person may take at the provider's form.
	flowSeconds = 600
)

// maxNameLen bounds a provider's name for a person, as the session row and the audit log
// keep it.
const maxNameLen = 128

// flow is what the browser keeps between leaving for the provider and coming back.
type flow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
}

// flowMAC signs a flow cookie's payload with the client secret: a cookie planted by someone
// else (another site cannot read or set it, a sibling host might) is not taken. The secret
// rather than HQ_ADMIN_TOKEN, which may be unset once there are operators; every controller
// of one mesh has the same secret, so a sign-in begun at one may come back to another.
func (o *OIDC) flowMAC(payload string) string {
	m := hmac.New(sha256.New, []byte(o.cfg.ClientSecret))
	m.Write([]byte("hq webui oidc flow " + payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (o *OIDC) encodeFlow(f flow) string {
	b, _ := json.Marshal(f)
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + o.flowMAC(payload)
}

func (o *OIDC) decodeFlow(value string) (flow, bool) {
	payload, mac, ok := strings.Cut(value, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(o.flowMAC(payload))) {
		return flow{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	var f flow
	if err != nil || json.Unmarshal(b, &f) != nil || f.State == "" || f.Nonce == "" || f.Verifier == "" {
		return flow{}, false
	}
	return f, true
}

func setFlowCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: value, Path: flowPath, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
}

// oidcLogin sends the browser to the provider with a fresh state, nonce and PKCE challenge,
// which the flow cookie keeps for the callback.
func (u *UI) oidcLogin(w http.ResponseWriter, r *http.Request) {
	if u.OIDC == nil {
		u.render(w, r, http.StatusNotFound, "message", &messagePage{chrome: chrome{Title: "not found"},
			Message: "No OpenID Connect provider is configured (HQ_OIDC_ISSUER): sign in with an operator's token."})
		return
	}
	p, _, err := u.OIDC.discover(r.Context())
	if err != nil {
		u.log.WarnContext(r.Context(), "webui: oidc discovery", "issuer", u.OIDC.cfg.Issuer, "err", err)
		u.refuseSignIn(w, r, http.StatusBadGateway, fmt.Sprintf("The provider %s could not be reached; the controller's log says why.", u.OIDC.host()))
		return
	}
	f := flow{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier()}
	setFlowCookie(w, r, u.OIDC.encodeFlow(f), flowSeconds)
	target := u.OIDC.oauth2(r, p).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier))
	http.Redirect(w, r, target, http.StatusFound)
}

// errorCode is the form of an OAuth error code; anything else the provider sends back is
// not shown.
var errorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// oidcCallback finishes a sign-in: it checks the state, exchanges the code with the PKCE
// verifier, verifies the ID token (issuer, audience, expiry, signature; then the nonce),
// maps the role claim to a role and opens a session whose row names the person and the role
// (token_id 0, via oidc). Every refusal says why, in hq's words.
func (u *UI) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if u.OIDC == nil {
		u.oidcLogin(w, r) // the same "not configured" page
		return
	}
	who, status, why := u.oidcIdentity(r, w)
	if why != "" {
		u.refuseSignIn(w, r, status, why)
		return
	}
	if !u.openSession(w, r, who) {
		return
	}
	u.render(w, r, http.StatusOK, "message", &messagePage{chrome: chrome{Title: "signed in", Onward: true},
		Message: fmt.Sprintf("Signed in as %s (%s).", who.Operator, who.Role)})
}

// oidcIdentity is who the callback vouches for, or the status and reason to refuse it.
func (u *UI) oidcIdentity(r *http.Request, w http.ResponseWriter) (hq.Identity, int, string) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		if !errorCode.MatchString(e) {
			e = "an error"
		}
		return hq.Identity{}, http.StatusUnauthorized, fmt.Sprintf("The provider did not sign you in (it answered %s).", e)
	}
	c, err := r.Cookie(flowCookie)
	if err != nil {
		return hq.Identity{}, http.StatusBadRequest, "This sign-in was not started in this browser, or took longer than ten minutes: start again."
	}
	setFlowCookie(w, r, "", -1) // one callback a sign-in
	f, ok := u.OIDC.decodeFlow(c.Value)
	switch {
	case !ok:
		return hq.Identity{}, http.StatusBadRequest, "This sign-in's cookie is not one hq set: start again."
	case !hmac.Equal([]byte(q.Get("state")), []byte(f.State)):
		return hq.Identity{}, http.StatusBadRequest, "The provider came back with a state this browser was not given, so the sign-in was refused: start again."
	case q.Get("code") == "":
		return hq.Identity{}, http.StatusBadRequest, "The provider came back without a code: start again."
	}
	p, verifier, err := u.OIDC.discover(r.Context())
	if err != nil {
		u.log.WarnContext(r.Context(), "webui: oidc discovery", "issuer", u.OIDC.cfg.Issuer, "err", err)
		return hq.Identity{}, http.StatusBadGateway, fmt.Sprintf("The provider %s could not be reached; the controller's log says why.", u.OIDC.host())
	}
	ctx := oidc.ClientContext(r.Context(), u.OIDC.client)
	tok, err := u.OIDC.oauth2(r, p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier))
	if err != nil {
		u.log.WarnContext(r.Context(), "webui: oidc code exchange", "err", err)
		return hq.Identity{}, http.StatusBadGateway, "The provider did not take the sign-in's code; the controller's log says why."
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return hq.Identity{}, http.StatusBadGateway, "The provider sent no ID token."
	}
	idt, err := verifier.Verify(ctx, raw)
	if err != nil {
		u.log.WarnContext(r.Context(), "webui: oidc id token", "err", err)
		return hq.Identity{}, http.StatusUnauthorized, "The provider's ID token was refused: " + verifyReason(err) + "."
	}
	if !hmac.Equal([]byte(idt.Nonce), []byte(f.Nonce)) {
		return hq.Identity{}, http.StatusUnauthorized, "The provider's ID token does not carry this sign-in's nonce, so it was refused: start again."
	}
	return u.OIDC.identityOf(idt)
}

// verifyReason says in a few words why go-oidc refused a token, without its text, which may
// quote the token's claims.
func verifyReason(err error) string {
	var expired *oidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return "it has expired"
	case strings.Contains(msg, "audience"):
		return "it was issued to another client (its audience is not HQ_OIDC_CLIENT_ID)"
	case strings.Contains(msg, "issued by a different provider"):
		return "it was issued by another issuer"
	case strings.Contains(msg, "signature"):
		return "its signature does not verify"
	}
	return "it is malformed"
}

// identityOf reads the name and the role from a verified ID token.
func (o *OIDC) identityOf(idt *oidc.IDToken) (hq.Identity, int, string) {
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return hq.Identity{}, http.StatusUnauthorized, "The provider's ID token has claims that cannot be read."
	}
	name := ""
	for _, k := range []string{"preferred_username", "email", "sub"} {
		if s, ok := claims[k].(string); ok && s != "" {
			name = s
			break
		}
	}
	if name == "" {
		return hq.Identity{}, http.StatusUnauthorized, "The provider's ID token names nobody (no preferred_username, email or sub)."
	}
	name = clip(name, maxNameLen)
	values, ok := claimStrings(claims[o.cfg.RoleClaim])
	if !ok {
		return hq.Identity{}, http.StatusForbidden, fmt.Sprintf("The claim %s of %s is neither a string nor a list of strings, so no role can be read from it.", o.cfg.RoleClaim, name)
	}
	role := o.cfg.Roles.Role(values)
	if role == "" {
		return hq.Identity{}, http.StatusForbidden, fmt.Sprintf("%s is signed in at the provider, but no value of their claim %s (%s) maps to a role in HQ_OIDC_ROLES, so hq refuses them.",
			name, o.cfg.RoleClaim, shown(values))
	}
	return hq.Identity{Operator: name, Role: role, SignIn: hq.SignInOIDC}, 0, ""
}

// claimStrings reads a claim that is a string or a list of strings; an absent claim is none.
func claimStrings(v any) ([]string, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		return []string{v}, true
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// shown is a claim's values for a refusal, bounded: a person may be in hundreds of groups.
func shown(values []string) string {
	if len(values) == 0 {
		return "none"
	}
	const most = 5
	s := make([]string, 0, most+1)
	for i, v := range values {
		if i == most {
			s = append(s, fmt.Sprintf("and %d more", len(values)-most))
			break
		}
		s = append(s, clip(v, 64))
	}
	return strings.Join(s, ", ")
}

// clip cuts s to at most n bytes, at a rune's boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// refuseSignIn answers a failed sign-in with the sign-in page and why.
func (u *UI) refuseSignIn(w http.ResponseWriter, r *http.Request, status int, why string) {
	page := u.loginPage()
	page.Refused = why
	u.render(w, r, status, "login", page)
}
