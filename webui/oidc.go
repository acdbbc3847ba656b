package webui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDCConfig is how the pages sign people in through an OpenID Connect provider
// (HQ_OIDC_*): hq is one confidential client of the issuer, and a claim of the ID token
// (groups, usually) says which role a person holds here.
type OIDCConfig struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	// RoleClaim names the claim, a string or a list of strings, that Roles maps.
	RoleClaim string
	Roles     RoleMap
	// RedirectURL is where the provider sends the browser back; "" is https://HOST/auth/callback
	// of the request that began the sign-in.
	RedirectURL string
}

// CheckIssuer refuses an issuer go-oidc could not use, or one that would carry the client
// secret in the clear: plain http only to a loopback address.
func CheckIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	switch {
	case err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q is not an issuer URL (https://HOST[/PATH])", issuer)
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	case u.Scheme == "http":
		return fmt.Errorf("%q: an issuer over plain http is taken only on loopback; use https", issuer)
	}
	return fmt.Errorf("%q is not an issuer URL (https://HOST[/PATH])", issuer)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckRedirectURL refuses a redirect URL that is not absolute http(s).
func CheckRedirectURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL (https://HOST/auth/callback)", s)
	}
	return nil
}

// OIDC signs people in through the provider. The provider's discovery document is read on
// the first sign-in, not at start, so a controller starts while its provider is away; a
// failed read is tried again at the next.
type OIDC struct {
	cfg    OIDCConfig
	client *http.Client
	log    *slog.Logger

	mu       sync.Mutex
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
}

// NewOIDC checks cfg and returns the client it describes.
func NewOIDC(cfg OIDCConfig, log *slog.Logger) (*OIDC, error) {
	if err := CheckIssuer(cfg.Issuer); err != nil {
		return nil, err
	}
	switch {
	case cfg.ClientID == "":
		return nil, errors.New("the client id is required")
	case cfg.ClientSecret == "":
		return nil, errors.New("the client secret is empty")
	case cfg.RoleClaim == "":
		return nil, errors.New("the role claim is required")
	case cfg.Roles.roles == nil && cfg.Roles.fallback == "":
		return nil, errors.New("the role mapping is required")
	}
	if cfg.RedirectURL != "" {
		if err := CheckRedirectURL(cfg.RedirectURL); err != nil {
			return nil, err
		}
	}
	return &OIDC{cfg: cfg, client: &http.Client{Timeout: 10 * time.Second}, log: log}, nil
}

// host is how the sign-in page names the provider.
func (o *OIDC) host() string {
	u, _ := url.Parse(o.cfg.Issuer) // checked in NewOIDC
	return u.Host
}

// discover reads the provider's discovery document once it answers.
func (o *OIDC) discover(ctx context.Context) (*oidc.Provider, *oidc.IDTokenVerifier, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, o.verifier, nil
	}
	// The provider keeps the client, not the context, for the keys it fetches later.
	read, cancel := context.WithTimeout(oidc.ClientContext(ctx, o.client), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(read, o.cfg.Issuer)
	if err != nil {
		return nil, nil, err
	}
	o.provider = p
	o.verifier = p.Verifier(&oidc.Config{ClientID: o.cfg.ClientID})
	return o.provider, o.verifier, nil
}

// oauth2 is the client for one request: the redirect URL follows the request's host unless
// one is configured, and the same request's host is used at the exchange, which must match.
func (o *OIDC) oauth2(r *http.Request, p *oidc.Provider) *oauth2.Config {
	redirect := o.cfg.RedirectURL
	if redirect == "" {
		redirect = "https://" + r.Host + "/auth/callback"
	}
	return &oauth2.Config{
		ClientID: o.cfg.ClientID, ClientSecret: o.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: redirect, Scopes: []string{oidc.ScopeOpenID, "profile", "email"},
	}
}
