package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/authz"
)

func (s *Server) placementRoutes(r chi.Router) {
	r.Get("/placements", s.listPlacements)
	r.Put("/placements/{placement}", s.putPlacement)
	r.Get("/placements/{placement}", s.getPlacement)
	r.Delete("/placements/{placement}", s.deletePlacement)
}

func (s *Server) putPlacement(w http.ResponseWriter, r *http.Request) {
	pname, err := name(r, "placement")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Module   string            `json:"module"`
		Selector string            `json:"selector"`
		Taken    bool              `json:"taken"`
		Rollout  *hq.RolloutPolicy `json:"rollout"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.placementInScope(r, pname, req.Module, req.Selector); err != nil {
		s.writeError(w, r, err)
		return
	}
	noteAudit(r, "", 0, "module "+req.Module+" on "+req.Selector)
	p, err := s.Store.PutPlacement(r.Context(), hq.Placement{Name: pname, Module: req.Module, Selector: req.Selector, Taken: req.Taken, Rollout: req.Rollout})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// placementInScope refuses a scoped deployer a placement of a module or on nodes outside its
// binding: the one it writes, and the one it would replace.
func (s *Server) placementInScope(r *http.Request, name, module, sel string) error {
	id, _ := hq.IdentityFrom(r.Context())
	if !id.Scoped() {
		return nil
	}
	if err := authz.CheckPlacement(id, module, sel); err != nil {
		return err
	}
	old, err := s.Store.GetPlacement(r.Context(), name)
	switch {
	case hq.ErrorCode(err) == hq.CodeNotFound:
		return nil
	case err != nil:
		return err
	}
	return authz.CheckPlacement(id, old.Module, old.Selector)
}

func (s *Server) listPlacements(w http.ResponseWriter, r *http.Request) {
	ps, err := s.Store.ListPlacements(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string][]hq.Placement{"placements": ps})
}

func (s *Server) getPlacement(w http.ResponseWriter, r *http.Request) {
	pname, err := name(r, "placement")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := s.Store.GetPlacement(r.Context(), pname)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) deletePlacement(w http.ResponseWriter, r *http.Request) {
	pname, err := name(r, "placement")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.Store.DeletePlacement(r.Context(), pname); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
