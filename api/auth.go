package api

import (
	"context"
	"crypto/subtle"
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/authz"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/bearer"
	"github.com/meshhq/hq/internal/guesses"
)

type ctxKey int

const callerKey ctxKey = 0

// caller is who made a request: an operator, or a node by name.
type caller struct {
	operator bool
	// id is the operator's identity; zero for a node.
	id   hq.Identity
	node string
	// check is what the node's token was checked against, with the node's generation then:
	// a long-poll waits on it without reading it again. Zero for the operator.
	check db.NodeCheck
}

// isBootstrap reports whether token is HQ_ADMIN_TOKEN.
func (s *Server) isBootstrap(token string) bool {
	return s.AdminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.AdminToken)) == 1
}

// operator finds whose operator token this is: HQ_ADMIN_TOKEN is the bootstrap admin; an
// operator token (hqo_…) is looked up. known with a reason is a token that was an operator's
// but may not be used now (revoked, expired). Anything else is no operator's.
func (s *Server) operator(r *http.Request, token string) (id hq.Identity, known bool, why string, err error) {
	if s.isBootstrap(token) {
		return hq.Identity{Operator: hq.BootstrapAdmin, Role: hq.RoleAdmin, Via: via(r), Source: guesses.Source(r)}, true, "", nil
	}
	if !strings.HasPrefix(token, "hqo_") {
		return hq.Identity{}, false, "", nil
	}
	c, err := s.Store.CheckOperatorToken(r.Context(), token)
	if err != nil || !c.Known {
		return hq.Identity{}, false, "", err
	}
	c.Identity.Via, c.Identity.Source = via(r), guesses.Source(r)
	return c.Identity, true, c.Why, nil
}

// via is how a request came: the hq CLI says so in its User-Agent.
func via(r *http.Request) string {
	if strings.HasPrefix(r.UserAgent(), "hq-cli/") {
		return hq.ViaCLI
	}
	return hq.ViaAPI
}

// operatorOnly admits an operator whose role meets the route's need (package authz) and,
// for a write, whose binding's scope holds what it changes. A node's token is recognised, to
// answer 403 rather than 401: the caller is known, but may not do this. Every write, and every
// refusal of a known operator, is a row of the audit log.
func (s *Server) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.guessing(w, r) {
			return
		}
		token := bearer.Token(r)
		if token == "" {
			s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "send Authorization: Bearer <operator token>"))
			return
		}
		id, known, why, err := s.operator(r, token)
		switch {
		case err != nil:
			s.writeError(w, r, err)
			return
		case !known:
			s.refuse(w, r, token, "a node's token may not do this; use an operator's token")
			return
		}
		s.authorize(w, r, id, why, next)
	})
}

// authorize runs next for id when the route's rule allows it, and audits the request when it
// writes or is refused.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, id hq.Identity, why string, next http.Handler) {
	rule, listed := authz.Lookup(r.Method, chi.RouteContext(r.Context()).RoutePattern())
	audited := rule.Need != authz.Read && r.Method != http.MethodGet && r.Method != http.MethodHead
	if !audited {
		if err := s.admit(r, rule, listed, id, why); err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(withOperator(r.Context(), id)))
		return
	}
	note := &auditNote{object: rule.ObjectOf(func(k string) string { return chi.URLParam(r, k) })}
	ctx := context.WithValue(withOperator(r.Context(), id), auditKey, note)
	r = r.WithContext(ctx)
	rec := &statusRecorder{ResponseWriter: w}
	if err := s.admit(r, rule, listed, id, why); err != nil {
		s.writeError(rec, r, err)
	} else {
		next.ServeHTTP(rec, r)
	}
	s.audit(ctx, id, rule, note, rec.status(), w.Header().Get("ETag"))
}

// admit is the check authorize makes: a token that is no longer good, a route with no rule
// (refused: the table is the only way in), a role that does not meet the need, or a write out
// of scope.
func (s *Server) admit(r *http.Request, rule authz.Rule, listed bool, id hq.Identity, why string) error {
	switch {
	case why != "":
		return hq.Errorf(hq.CodeUnauthorized, "%s", why)
	case !listed:
		return hq.Errorf(hq.CodeForbidden, "%s %s has no entry in the authorization table", r.Method, r.URL.Path)
	}
	if err := rule.Role(id); err != nil {
		return err
	}
	return rule.Check(r.Context(), s.Store, id, func(k string) string { return chi.URLParam(r, k) })
}

func withOperator(ctx context.Context, id hq.Identity) context.Context {
	return hq.WithIdentity(context.WithValue(ctx, callerKey, caller{operator: true, id: id}), id)
}

// nodeOrOperator admits an operator, or the node named in the path with its own token. An
// operator token is looked up only when it looks like one, so a node's calls cost no more.
func (s *Server) nodeOrOperator(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.guessing(w, r) {
			return
		}
		token := bearer.Token(r)
		node := chi.URLParam(r, "node")
		if token == "" {
			s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "send Authorization: Bearer <node token>"))
			return
		}
		if s.isBootstrap(token) || strings.HasPrefix(token, "hqo_") {
			id, known, why, err := s.operator(r, token)
			switch {
			case err != nil:
				s.writeError(w, r, err)
			case why != "":
				s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "%s", why))
			case known:
				next.ServeHTTP(w, r.WithContext(withOperator(r.Context(), id)))
			default:
				s.refuse(w, r, token, "this token belongs to another node")
			}
			return
		}
		check, err := s.Store.CheckNodeToken(r.Context(), node, token)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if check.Valid && s.NodeCertificates && !certNames(r, node) {
			s.writeError(w, r, hq.Errorf(hq.CodeForbidden, "node %s's calls need its client certificate (common name or DNS name %s) besides its token", node, node))
			return
		}
		if check.Valid {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, caller{node: node, check: check})))
			return
		}
		s.refuse(w, r, token, "this token belongs to another node")
	})
}

// refuse answers a token that may not make this call: 403 with forbidden when it is some
// node's token (the caller is known, but may not do this), 401 when it is nobody's. A store
// that cannot answer is a 500, never a 401 that would send a node off to re-provision.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, token, forbidden string) {
	known, err := s.Store.AnyNodeToken(r.Context(), token)
	switch {
	case err != nil:
		s.writeError(w, r, err)
	case known:
		s.writeError(w, r, hq.Errorf(hq.CodeForbidden, "%s", forbidden))
	default:
		s.Guesses.Failed(guesses.Source(r))
		s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "token not recognised"))
	}
}

// guessing answers 429 a request from an address that sent too many tokens that were nobody's
// (Guesses), before its token is looked at; it reports whether it did.
func (s *Server) guessing(w http.ResponseWriter, r *http.Request) bool {
	blocked, after := s.Guesses.Blocked(guesses.Source(r))
	if blocked {
		guesses.SetRetryAfter(w, after)
		s.writeError(w, r, hq.Errorf(hq.CodeTooManyRequests, "too many tokens that were not recognised came from this address; try again after Retry-After seconds"))
	}
	return blocked
}

// certNames reports whether the request's verified client certificate names node, by its
// common name or one of its DNS names. The TLS listener verified it against HQ_CLIENT_CA.
func certNames(r *http.Request, node string) bool {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
		return false
	}
	leaf := r.TLS.VerifiedChains[0][0]
	return leaf.Subject.CommonName == node || slices.Contains(leaf.DNSNames, node)
}
