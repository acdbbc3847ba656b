package api

import (
	"context"
	"crypto/subtle"
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/bearer"
	"github.com/meshhq/hq/internal/guesses"
)

type ctxKey int

const callerKey ctxKey = 0

// caller is who made a request: the operator, or a node by name.
type caller struct {
	operator bool
	node     string
	// check is what the node's token was checked against, with the node's generation then:
	// a long-poll waits on it without reading it again. Zero for the operator.
	check db.NodeCheck
}

func (s *Server) isOperator(token string) bool {
	return s.AdminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.AdminToken)) == 1
}

// operatorOnly admits the operator's token. A node's token is recognised, to answer 403
// rather than 401: the caller is known, but may not do this.
func (s *Server) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.guessing(w, r) {
			return
		}
		token := bearer.Token(r)
		switch {
		case token == "":
			s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "send Authorization: Bearer <operator token>"))
		case s.isOperator(token):
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, caller{operator: true})))
		default:
			s.refuse(w, r, token, "a node's token may not do this; use the operator token")
		}
	})
}

// nodeOrOperator admits the operator, or the node named in the path with its own token.
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
		if s.isOperator(token) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, caller{operator: true})))
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
