package api

import (
	"net/http"

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
