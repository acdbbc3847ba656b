package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

type user struct {
	name, password string
	groups         []string
}

// storage is op.Storage in memory: what op needs of one client's code flow, and refusals for
// the grants it does not offer.
type storage struct {
	client *client
	users  users
	key    *rsa.PrivateKey

	mu       sync.Mutex
	requests map[string]*authRequest
	codes    map[string]string // code → request id
}

func newStorage(c *client, us users) (*storage, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return &storage{client: c, users: us, key: key, requests: map[string]*authRequest{}, codes: map[string]string{}}, nil
}

var errNotFound = errors.New("not found")

// signIn completes request id for the user whose password it is.
func (s *storage) signIn(id, name, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.requests[id]
	if !ok {
		return errors.New("this sign-in is unknown or over")
	}
	u, ok := s.users[name]
	if !ok || u.password != password {
		return errors.New("wrong user name or password")
	}
	a.subject, a.done, a.authTime = name, true, time.Now()
	return nil
}

func (s *storage) CreateAuthRequest(_ context.Context, r *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	a := &authRequest{id: rand.Text(), req: *r}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[a.id] = a
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.requests[id]; ok {
		return a, nil
	}
	return nil, errNotFound
}

func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	id, ok := s.codes[code]
	s.mu.Unlock()
	if !ok {
		return nil, errNotFound
	}
	return s.AuthRequestByID(ctx, id)
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest ends a request once its code is exchanged, so a code works once.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.requests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(context.Context, op.TokenRequest) (string, time.Time, error) {
	return rand.Text(), time.Now().Add(5 * time.Minute), nil
}

func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, errors.New("no refresh tokens here")
}

func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error { return nil }

func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) { return signingKey{s.key}, nil }

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) { return []op.Key{publicKey{s.key}}, nil }

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if id != s.client.id {
		return nil, errNotFound
	}
	return s.client, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if id != s.client.id || secret != s.client.secret {
		return errors.New("wrong client or secret")
	}
	return nil
}

// SetUserinfoFromScopes puts the user's names and groups into the ID token, whatever the
// scopes, as a provider configured to send groups does.
func (s *storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, subject, _ string, _ []string) error {
	u, ok := s.users[subject]
	if !ok {
		return errNotFound
	}
	info.Subject = u.name
	info.PreferredUsername = u.name
	info.Email = u.name + "@example.test"
	if u.groups != nil {
		info.AppendClaims("groups", u.groups)
	}
	return nil
}

func (s *storage) SetUserinfoFromToken(ctx context.Context, info *oidc.UserInfo, _, subject, _ string) error {
	return s.SetUserinfoFromScopes(ctx, info, subject, "", nil)
}

func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errors.New("no introspection here")
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errNotFound
}

func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("no JWT profile grant here")
}

func (s *storage) Health(context.Context) error { return nil }

type signingKey struct{ k *rsa.PrivateKey }

func (k signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k signingKey) Key() any                                    { return k.k }
func (k signingKey) ID() string                                  { return "k1" }

type publicKey struct{ k *rsa.PrivateKey }

func (k publicKey) ID() string                         { return "k1" }
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.k.PublicKey }
