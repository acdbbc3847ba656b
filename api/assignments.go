package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"
)

func (s *Server) assignmentRoutes(r chi.Router) {
	r.Put("/nodes/{node}/assignments/{module}", s.assign)
	r.Delete("/nodes/{node}/assignments/{module}", s.unassign)
	r.Post("/nodes/{node}/assignments/{module}/take", s.take)
}

func (s *Server) assign(w http.ResponseWriter, r *http.Request) {
	// Without "taken" an existing assignment keeps its flag and a new one is not taken.
	var req struct {
		Taken *bool `json:"taken"`
	}
	if r.ContentLength != 0 {
		if err := decode(w, r, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	s.changeAssignment(w, r, func(ctx context.Context, node, module string, match *int64) (int64, error) {
		return s.Store.Assign(ctx, node, module, req.Taken, match)
	})
}

func (s *Server) unassign(w http.ResponseWriter, r *http.Request) {
	s.changeAssignment(w, r, s.Store.Unassign)
}

func (s *Server) take(w http.ResponseWriter, r *http.Request) {
	s.changeAssignment(w, r, s.Store.Take)
}

// changeAssignment reads the node, module and If-Match of a request, makes the change, and
// answers with the node's generation.
func (s *Server) changeAssignment(w http.ResponseWriter, r *http.Request, change func(ctx context.Context, node, module string, match *int64) (int64, error)) {
	t, err := readTarget(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	gen, err := change(r.Context(), t.node, t.module, t.ifMatch)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setETag(w, gen)
	writeJSON(w, http.StatusOK, map[string]int64{"generation": gen})
}
