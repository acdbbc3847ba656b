package webui

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// Identity is who a request to the pages is: the name the chrome shows, the role they hold
// and how they signed in. Roles are recorded here; what each may do is decided elsewhere.
type Identity struct {
	Name string `json:"n"`
	Role string `json:"r"`
	// Via is "token" (the operator token, by any route) or "oidc".
	Via string `json:"v"`
}

// tokenIdentity is whoever presents HQ_ADMIN_TOKEN: the bootstrap admin.
var tokenIdentity = Identity{Name: "admin", Role: RoleAdmin, Via: "token"}

// maxNameLen bounds a provider's name for a person, so the session cookie stays small.
const maxNameLen = 128

// A session cookie is "ID" for a session opened with the token, or "ID.IDENTITY" (IDENTITY
// the base64url of its JSON) for one opened through the provider. The store keeps the HMAC
// of the whole value under the operator token (auth.secret), so the identity is bound to the
// row: a cookie whose identity was changed names no session, and every controller sharing
// the database and the token reads the same identity from it. The random ID is base32, so
// it never holds the dot.

// sessionCookieValue is the cookie of a new session with random id for who.
func sessionCookieValue(id string, who Identity) string {
	if who == tokenIdentity {
		return id
	}
	b, _ := json.Marshal(who)
	return id + "." + base64.RawURLEncoding.EncodeToString(b)
}

// cookieIdentity reads the identity a session cookie names; the store says whether it is a
// session at all.
func cookieIdentity(value string) (Identity, bool) {
	_, enc, ok := strings.Cut(value, ".")
	if !ok {
		return tokenIdentity, true
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return Identity{}, false
	}
	var who Identity
	if err := json.Unmarshal(b, &who); err != nil || who.Name == "" || roleRank[who.Role] == 0 {
		return Identity{}, false
	}
	return who, true
}

// identityKey marks a request's context once operatorOnly admitted it.
type identityKey struct{}

func withIdentity(ctx context.Context, who Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, who)
}

// identity is who operatorOnly admitted the request as; ok is false for a request it did not.
func identity(r *http.Request) (Identity, bool) {
	who, ok := r.Context().Value(identityKey{}).(Identity)
	return who, ok
}
