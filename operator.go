package hq

import (
	"context"
	"path"
	"slices"
	"time"
)

// Role is what an operator may do. The roles are fixed: viewer reads everything; deployer also
// changes modules, assignments, takes, labels, vars, placements and rollouts and retries
// resources; admin also manages operators, registers and deletes nodes and rotates the signing
// key. Which role each route needs is the authorization table (package authz).
type Role string

const (
	RoleViewer   Role = "viewer"
	RoleDeployer Role = "deployer"
	RoleAdmin    Role = "admin"
)

// Roles is every role, least first.
var Roles = []Role{RoleViewer, RoleDeployer, RoleAdmin}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return slices.Contains(Roles, r) }

// AtLeast reports whether r may do what other may: the roles are ordered, each doing all the
// one before it does.
func (r Role) AtLeast(other Role) bool {
	return slices.Index(Roles, r) >= slices.Index(Roles, other) && r.Valid()
}

// BootstrapAdmin is the name HQ_ADMIN_TOKEN signs in as.
const BootstrapAdmin = "admin"

// Operator is one named operator: its role and, for a deployer, the bounds of what it may
// change. Modules is a glob (path.Match: web-*) of module names, Nodes a label selector
// (team=web); "" bounds nothing.
type Operator struct {
	Name      string          `json:"name"`
	Role      Role            `json:"role"`
	Modules   string          `json:"modules,omitempty"`
	Nodes     string          `json:"nodes,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	CreatedBy string          `json:"created_by,omitempty"`
	RevokedAt *time.Time      `json:"revoked_at,omitempty"`
	Tokens    []OperatorToken `json:"tokens,omitempty"`
}

// OperatorToken is one of an operator's tokens as it is listed: never the token itself, which
// is shown once when it is made and kept only as a hash.
type OperatorToken struct {
	ID        int64      `json:"id"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// NewToken is a token just made: the one time its text is shown.
type NewToken struct {
	Operator  string     `json:"operator"`
	ID        int64      `json:"id"`
	Token     string     `json:"token"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// ModuleInScope reports whether a binding bounded to the glob pattern may change module.
func ModuleInScope(pattern, module string) bool {
	if pattern == "" {
		return true
	}
	ok, err := path.Match(pattern, module)
	return err == nil && ok
}

// How a request came: by the API, from the pages, or by the hq CLI (which says so in its
// User-Agent).
const (
	ViaAPI  = "api"
	ViaPage = "page"
	ViaCLI  = "cli"
)

// Identity is who makes an operator's request, however it signed in: a bearer token, a page
// session (opened with a token, or through the OpenID Connect provider: then it carries the
// name and role it was opened with, and no bounds), or HQ_ADMIN_TOKEN. Modules and Nodes
// are the binding's bounds.
type Identity struct {
	Operator string
	Role     Role
	Modules  string
	Nodes    string
	// TokenID is the operator token the request or its session was opened with; 0 for none.
	TokenID int64
	// SignIn is how a page session was opened (SignInToken, SignInOIDC); "" for a request
	// that carried its token itself.
	SignIn string
	Via    string
	Source string
}

// How a page session was opened: with a token in the sign-in form, or through the OpenID
// Connect provider, whose person need not be an operator (web_sessions.via).
const (
	SignInToken = "token"
	SignInOIDC  = "oidc"
)

// Scoped reports whether the identity's changes are bounded to some modules or nodes.
func (id Identity) Scoped() bool { return id.Modules != "" || id.Nodes != "" }

type identityKey struct{}

// WithIdentity returns ctx carrying id, for the store to record as the author of what it
// changes.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity ctx carries, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// Author is the operator name ctx carries, or "" when it carries none.
func Author(ctx context.Context) string {
	id, _ := IdentityFrom(ctx)
	return id.Operator
}

// AuditEntry is one row of the audit log: an operator's request that changed something or
// was refused. Result is the revision or generation it made (0: none), Outcome its HTTP
// status; Detail never holds a secret or a token.
type AuditEntry struct {
	ID       int64     `json:"id"`
	At       time.Time `json:"at"`
	Operator string    `json:"operator"`
	Role     Role      `json:"role"`
	Via      string    `json:"via"`
	Source   string    `json:"source"`
	Action   string    `json:"action"`
	Object   string    `json:"object"`
	Result   int64     `json:"result,omitempty"`
	Outcome  int       `json:"outcome"`
	Detail   string    `json:"detail,omitempty"`
}
