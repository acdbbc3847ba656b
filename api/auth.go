package api

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

type ctxKey int

const callerKey ctxKey = 0

// caller is who made a request: the operator, or a node by name.
type caller struct {
	operator bool
	node     string
}

func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") { // the scheme is case-insensitive (RFC 9110)
		return ""
	}
	return strings.TrimSpace(token)
}

func (s *Server) isOperator(token string) bool {
	return s.AdminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(s.AdminToken)) == 1
}

// operatorOnly admits the operator's token. A node's token is recognised, to answer 403
// rather than 401: the caller is known, but may not do this.
func (s *Server) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearer(r)
		switch {
		case token == "":
			s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "send Authorization: Bearer <operator token>"))
		case s.isOperator(token):
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, caller{operator: true})))
		default:
			if s.knownNodeToken(r, token) {
				s.writeError(w, r, hq.Errorf(hq.CodeForbidden, "a node's token may not do this; use the operator token"))
				return
			}
			s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "token not recognised"))
		}
	})
}

// nodeOrOperator admits the operator, or the node named in the path with its own token.
func (s *Server) nodeOrOperator(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := bearer(r)
		node := chi.URLParam(r, "node")
		if token == "" {
			s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "send Authorization: Bearer <node token>"))
			return
		}
		if s.isOperator(token) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, caller{operator: true})))
			return
		}
		ok, err := s.Store.NodeTokenValid(r.Context(), node, token)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if ok {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, caller{node: node})))
			return
		}
		if s.knownNodeToken(r, token) {
			s.writeError(w, r, hq.Errorf(hq.CodeForbidden, "this token belongs to another node"))
			return
		}
		s.writeError(w, r, hq.Errorf(hq.CodeUnauthorized, "token not recognised"))
	})
}

// knownNodeToken reports whether token belongs to some node.
func (s *Server) knownNodeToken(r *http.Request, token string) bool {
	ok, err := s.Store.AnyNodeToken(r.Context(), token)
	return err == nil && ok
}
