package api

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/authz"
	"github.com/meshhq/hq/db"
)

func (s *Server) nodeRoutes(r chi.Router) {
	r.Post("/nodes", s.createNode)
	r.Get("/nodes", s.listNodes)
	r.Get("/nodes/{node}", s.getNode)
	r.Delete("/nodes/{node}", s.deleteNode)
	r.Put("/nodes/{node}/labels", s.setLabels)
	r.Put("/nodes/{node}/vars", s.setVars)
	r.Post("/nodes/{node}/resources/{module}/{resource}/retry", s.retry)
}

func (s *Server) createNode(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	noteAudit(r, "node/"+req.Name, 0, "")
	token, gen, err := s.Store.CreateLabelledNode(r.Context(), req.Name, req.Labels)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setETag(w, gen)
	writeJSON(w, http.StatusCreated, map[string]any{"name": req.Name, "token": token, "generation": gen})
}

// setLabels answers PUT /nodes/{node}/labels {"labels":{…}}: the node's labels, all replaced.
func (s *Server) setLabels(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Labels map[string]string `json:"labels"`
	}
	// A scoped deployer's node must stay in its scope: the labels it sets must match too.
	set := func(ctx context.Context, node string, labels map[string]string, ifMatch *int64) (int64, error) {
		if id, _ := hq.IdentityFrom(ctx); id.Scoped() {
			if err := authz.CheckLabels(id, node, labels); err != nil {
				return 0, err
			}
		}
		return s.Store.SetLabels(ctx, node, labels, ifMatch)
	}
	s.setPairs(w, r, &req, func() map[string]string { return req.Labels }, set)
}

// setVars answers PUT /nodes/{node}/vars {"vars":{…}}: the node's vars, all replaced.
func (s *Server) setVars(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Vars map[string]string `json:"vars"`
	}
	s.setPairs(w, r, &req, func() map[string]string { return req.Vars }, s.Store.SetVars)
}

func (s *Server) setPairs(w http.ResponseWriter, r *http.Request, req any, pairs func() map[string]string,
	set func(ctx context.Context, node string, m map[string]string, ifMatch *int64) (int64, error)) {
	t, err := readTarget(r)
	if err == nil {
		err = decode(w, r, req)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	gen, err := set(r.Context(), t.node, pairs(), t.ifMatch)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	setETag(w, gen)
	writeJSON(w, http.StatusOK, map[string]int64{"generation": gen})
}

// nodeList is one page of GET /nodes: the nodes, the cursor of the next page, and by status
// every node of the mesh, or with a selector every node it matches, whatever the status
// filter keeps of them.
type nodeList struct {
	Nodes  []hq.NodeView     `json:"nodes"`
	Next   string            `json:"next,omitempty"`
	Counts map[hq.Status]int `json:"counts"`
	Total  int               `json:"total"`
}

// listNodes answers GET /nodes?status=S&selector=SEL&limit=N&cursor=C, in name order. status
// may be any node status, or "not-converged" for every node that needs a look; selector is a
// label selector.
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
	var sel *string
	if q.Has("selector") {
		s := q.Get("selector")
		sel = &s
	}
	f, err := db.ParseNodeFilter(q.Get("status"), sel)
	if err != nil {
		return f, err
	}
	f.After = q.Get("cursor")
	limit, err := limitOr(r, defaultNodeLimit)
	f.Limit = int(limit)
	return f, err
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
