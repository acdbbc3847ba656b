package api

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

func (s *Server) moduleRoutes(r chi.Router) {
	r.Put("/modules/{module}", s.putModule)
	r.Get("/modules", s.listModules)
	r.Get("/modules/{module}", s.getModule)
}

func (s *Server) putModule(w http.ResponseWriter, r *http.Request) {
	module, err := name(r, "module")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Resources []hq.Resource `json:"resources"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Resources == nil {
		s.writeError(w, r, &hq.Error{Code: hq.CodeInvalid, Message: "a module needs a resources list", Details: []hq.FieldError{{Field: "resources", Message: "is required (it may be empty)"}}})
		return
	}
	if dry, err := dryRun(r); err != nil || dry {
		s.planModule(w, r, module, req.Resources, err)
		return
	}
	res, err := s.Store.PutModule(r.Context(), module, req.Resources)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	writeJSON(w, status, res)
}

func (s *Server) listModules(w http.ResponseWriter, r *http.Request) {
	mods, err := s.Store.ListModules(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string][]hq.ModuleView{"modules": mods})
}

func (s *Server) getModule(w http.ResponseWriter, r *http.Request) {
	module, err := name(r, "module")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	m, err := s.Store.GetModule(r.Context(), module)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// dryRun reads ?dry_run=: true asks what an upload would do, and does nothing.
func dryRun(r *http.Request) (bool, error) {
	v := r.URL.Query().Get("dry_run")
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, hq.Errorf(hq.CodeBadRequest, "dry_run must be true or false")
	}
	return b, nil
}

// planModule answers PUT /modules/{module}?dry_run=true with what the upload would do: the
// revision, the resources added, changed and removed, the nodes whose generation would move,
// and what would refuse it. Nothing is written.
func (s *Server) planModule(w http.ResponseWriter, r *http.Request, module string, resources []hq.Resource, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	plan, err := s.Store.PlanModule(r.Context(), module, resources)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, plan)
}
