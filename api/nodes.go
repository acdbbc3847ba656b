package api

import (
	"net/http"
	"slices"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
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

// nodeList is one page of GET /nodes: the nodes, the cursor of the next page, and every node
// of the mesh counted by status.
type nodeList struct {
	Nodes  []hq.NodeView     `json:"nodes"`
	Next   string            `json:"next,omitempty"`
	Counts map[hq.Status]int `json:"counts"`
	Total  int               `json:"total"`
}

// listNodes answers GET /nodes?status=S&limit=N&cursor=C, in name order. status may be any
// node status, or "not-converged" for every node that needs a look.
func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	f, err := nodeFilter(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.Store.ListNodes(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nodeList{Nodes: page.Nodes, Next: page.Next, Counts: page.Counts, Total: page.Total})
}

func nodeFilter(r *http.Request) (db.NodeFilter, error) {
	q := r.URL.Query()
	f := db.NodeFilter{After: q.Get("cursor")}
	switch st := hq.Status(q.Get("status")); {
	case st == "":
	case st == notConverged:
		f.NotConverged = true
	case slices.Contains(hq.Statuses, st):
		f.Status = st
	default:
		return f, hq.Errorf(hq.CodeBadRequest, "status must be one of %v or %s", hq.Statuses, notConverged)
	}
	limit, err := limitOr(r, defaultNodeLimit)
	f.Limit = int(limit)
	return f, err
}

// notConverged is the status filter for every node that needs a look.
const notConverged hq.Status = "not-converged"

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
