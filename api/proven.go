package api

import (
	"context"
	"crypto/subtle"
	"net/http"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq/internal/bearer"
)

// proven remembers, for each node, the token its last report was taken with. A report that
// comes with that token again is not checked before it is read: its write checks the token
// (db.IngestOptions.Token) as it reads the node, and refuses the report, changing nothing, when
// the token no longer holds (the node deleted, or its token replaced, perhaps through another
// controller). Every other report is checked first as any call is, so a token that never held
// never reaches a write. On PostgreSQL this saves a report its one read before the write: a
// round trip that cost more than the steady report's write.
type proven struct {
	mu     sync.Mutex
	tokens map[string]string
}

func newProven() *proven { return &proven{tokens: map[string]string{}} }

func (p *proven) has(node, token string) bool {
	p.mu.Lock()
	known, ok := p.tokens[node]
	p.mu.Unlock()
	return ok && subtle.ConstantTimeCompare([]byte(known), []byte(token)) == 1
}

// add remembers token as node's, bounded as repeats are.
func (p *proven) add(node, token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tokens) >= maxRepeats {
		clear(p.tokens)
	}
	p.tokens[node] = token
}

func (p *proven) forget(node string) {
	p.mu.Lock()
	delete(p.tokens, node)
	p.mu.Unlock()
}

// reporter admits a report as nodeOrOperator does, except that a report with the token its
// node's last report was taken with goes on unchecked, for its write to check (proven). With
// NodeCertificates every report is checked first: the certificate is the caller's, not the
// write's, to prove.
func (s *Server) reporter(next http.Handler) http.Handler {
	checked := s.nodeOrOperator(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		node := chi.URLParam(r, "node")
		if token := bearer.Token(r); token != "" && !s.NodeCertificates && s.proven.has(node, token) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), callerKey, caller{node: node})))
			return
		}
		checked.ServeHTTP(w, r)
	})
}
