package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Server) historyRoutes(r chi.Router) {
	r.Get("/nodes/{node}/sends", history(s, "sends", s.Store.Sends))
	r.Get("/nodes/{node}/reports", history(s, "reports", s.Store.Reports))
	r.Get("/nodes/{node}/transitions", history(s, "transitions", s.Store.Transitions))
	r.Get("/nodes/{node}/drifts", history(s, "drifts", s.Store.Drifts))
}

// history serves one of a node's histories, newest first, as {"<key>": [...]}.
func history[T any](s *Server, key string, list func(ctx context.Context, node string, limit int64) ([]T, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		node, err := name(r, "node")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		n, err := limit(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		rows, err := list(r.Context(), node, n)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if gen, err := s.Store.NodeGeneration(r.Context(), node); err == nil {
			setETag(w, gen) // a deleted node has history but no generation
		}
		writeJSON(w, http.StatusOK, map[string][]T{key: rows})
	}
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st, err := s.Store.MeshStatus(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
