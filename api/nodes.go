package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

func (s *Server) nodeRoutes(r chi.Router) {
	r.Post("/nodes", s.createNode)
	r.Get("/nodes", s.listNodes)
	r.Get("/nodes/{node}", s.getNode)
	r.Delete("/nodes/{node}", s.deleteNode)
	r.Post("/nodes/{node}/resources/{module}/{resource}/retry", s.retry)
}

func (s *Server) createNode(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	token, err := s.Store.CreateNode(r.Context(), req.Name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setETag(w, 0)
	writeJSON(w, http.StatusCreated, map[string]any{"name": req.Name, "token": token, "generation": 0})
}

func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	nodes, err := s.Store.ListNodes(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string][]hq.NodeView{"nodes": nodes})
}

func (s *Server) getNode(w http.ResponseWriter, r *http.Request) {
	node, err := name(r, "node")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := s.Store.GetNode(r.Context(), node)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setETag(w, v.Generation)
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) deleteNode(w http.ResponseWriter, r *http.Request) {
	t, err := readTarget(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	gen, err := s.Store.DeleteNode(r.Context(), t.node, t.ifMatch)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setETag(w, gen)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) retry(w http.ResponseWriter, r *http.Request) {
	t, err := readTarget(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	gen, err := s.Store.Retry(r.Context(), t.node, t.module, t.resource, t.ifMatch)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setETag(w, gen)
	writeJSON(w, http.StatusOK, map[string]string{"retry": hq.Ref(t.module, t.resource)})
}
