package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

func (s *Server) rolloutRoutes(r chi.Router) {
	r.Get("/rollouts", s.listRollouts)
	r.Get("/rollouts/{rollout}", s.getRollout)
	r.Post("/rollouts/{rollout}/pause", s.pauseRollout)
	r.Post("/rollouts/{rollout}/resume", s.resumeRollout)
	r.Post("/rollouts/{rollout}/promote", s.promoteRollout)
	r.Post("/rollouts/{rollout}/abort", s.abortRollout)
	r.Post("/placements/{placement}/rollback", s.rollbackPlacement)
}

// rolloutID reads the rollout's id from the path.
func rolloutID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(chi.URLParam(r, "rollout"), 10, 64)
	if err != nil || id < 1 {
		return 0, hq.Errorf(hq.CodeBadRequest, "a rollout is named by its id, a positive number, not %q", chi.URLParam(r, "rollout"))
	}
	return id, nil
}

func (s *Server) listRollouts(w http.ResponseWriter, r *http.Request) {
	n, err := limit(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rs, err := s.Store.ListRollouts(r.Context(), int(n))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string][]hq.Rollout{"rollouts": rs})
}

func (s *Server) getRollout(w http.ResponseWriter, r *http.Request) {
	s.rollout(w, r, s.Store.GetRollout)
}

func (s *Server) pauseRollout(w http.ResponseWriter, r *http.Request) {
	s.rollout(w, r, s.Store.PauseRollout)
}

func (s *Server) promoteRollout(w http.ResponseWriter, r *http.Request) {
	s.rollout(w, r, s.Store.PromoteRollout)
}

// rollbackPlacement starts a rollout of the placement's nodes back to {"revision": N}, and
// answers it, 201.
func (s *Server) rollbackPlacement(w http.ResponseWriter, r *http.Request) {
	pname, err := name(r, "placement")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Revision int64 `json:"revision"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Revision < 1 {
		s.writeError(w, r, &hq.Error{Code: hq.CodeInvalid, Message: "a rollback names the revision to go back to: {\"revision\": N}, N at least 1",
			Details: []hq.FieldError{{Field: "revision", Message: "want a revision of the module, at least 1"}}})
		return
	}
	v, err := s.Store.RollbackPlacement(r.Context(), pname, req.Revision)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

func (s *Server) resumeRollout(w http.ResponseWriter, r *http.Request) {
	s.rollout(w, r, s.Store.ResumeRollout)
}

func (s *Server) abortRollout(w http.ResponseWriter, r *http.Request) {
	s.rollout(w, r, s.Store.AbortRollout)
}

func (s *Server) rollout(w http.ResponseWriter, r *http.Request, do func(ctx context.Context, id int64) (hq.Rollout, error)) {
	id, err := rolloutID(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := do(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
