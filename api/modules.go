package api

import (
	"net/http"
	"strconv"
	"strings"

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
		noteAudit(r, "", 0, "plan only (dry_run)")
		s.planModule(w, r, module, req.Resources, err)
		return
	}
	msg, err := pushMessage(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.Store.PushModule(r.Context(), module, req.Resources, msg)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	detail := msg
	if !res.Created {
		detail = "identical to the newest revision: nothing changed"
	}
	noteAudit(r, "", res.Revision, detail)
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

// maxMessage bounds a push's message: a line or two, as a commit's subject.
const maxMessage = 1024

// pushMessage is what the pusher says of a new revision: the X-HQ-Message header, or
// ?message= for a client that cannot set headers; "" for none.
func pushMessage(r *http.Request) (string, error) {
	msg := r.Header.Get("X-HQ-Message")
	if msg == "" {
		msg = r.URL.Query().Get("message")
	}
	if len(msg) > maxMessage || strings.ContainsAny(msg, "\x00\r\n") {
		return "", hq.Errorf(hq.CodeInvalid, "a push's message is one line of at most %d bytes", maxMessage)
	}
	return msg, nil
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
