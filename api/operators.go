package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

func (s *Server) operatorRoutes(r chi.Router) {
	r.Get("/operators", s.listOperators)
	r.Post("/operators", s.addOperator)
	r.Delete("/operators/{operator}", s.revokeOperator)
	r.Post("/operators/{operator}/tokens", s.newOperatorToken)
	r.Delete("/operator-tokens/{token}", s.revokeOperatorToken)
	r.Post("/controller-key/rotate", s.rotateKey)
}

func (s *Server) listOperators(w http.ResponseWriter, r *http.Request) {
	ops, err := s.Store.ListOperators(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string][]hq.Operator{"operators": ops})
}

// expiry reads a token's lifetime ("720h"; "" never expires) into when it ends.
func expiry(v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return nil, hq.Errorf(hq.CodeInvalid, "expires is a positive duration such as 720h, not %q", v)
	}
	t := time.Now().Add(d)
	return &t, nil
}

// addOperator answers POST /operators {"name","role","modules","nodes","expires"}: the new
// operator's first token, shown this once.
func (s *Server) addOperator(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name    string  `json:"name"`
		Role    hq.Role `json:"role"`
		Modules string  `json:"modules"`
		Nodes   string  `json:"nodes"`
		Expires string  `json:"expires"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	noteAudit(r, "operator/"+req.Name, 0, "role "+string(req.Role)+scopeDetail(req.Modules, req.Nodes))
	exp, err := expiry(req.Expires)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	tok, err := s.Store.AddOperator(r.Context(), hq.Operator{Name: req.Name, Role: req.Role, Modules: req.Modules, Nodes: req.Nodes}, exp)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	noteAudit(r, "", tok.ID, "")
	writeJSON(w, http.StatusCreated, tok)
}

func scopeDetail(modules, nodes string) string {
	d := ""
	if modules != "" {
		d += ", modules " + modules
	}
	if nodes != "" {
		d += ", nodes " + nodes
	}
	return d
}

// newOperatorToken answers POST /operators/{operator}/tokens {"expires":"720h"}: another token.
func (s *Server) newOperatorToken(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Expires string `json:"expires"`
	}
	if r.ContentLength != 0 {
		if err := decode(w, r, &req); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	exp, err := expiry(req.Expires)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	tok, err := s.Store.NewOperatorToken(r.Context(), chi.URLParam(r, "operator"), exp)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	noteAudit(r, "", tok.ID, "token "+strconv.FormatInt(tok.ID, 10))
	writeJSON(w, http.StatusCreated, tok)
}

func (s *Server) revokeOperator(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.RevokeOperator(r.Context(), chi.URLParam(r, "operator")); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) revokeOperatorToken(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(chi.URLParam(r, "token"), 10, 64)
	if err != nil || id < 1 {
		s.writeError(w, r, hq.Errorf(hq.CodeBadRequest, "a token is named by its id, a positive number"))
		return
	}
	if err := s.Store.RevokeOperatorToken(r.Context(), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// rotateKey answers POST /controller-key/rotate: the signing key is replaced as hq key rotate
// replaces it, by the controller that serves the call (RotateKey); 501 where it has no key file.
func (s *Server) rotateKey(w http.ResponseWriter, r *http.Request) {
	if s.RotateKey == nil {
		s.writeError(w, r, hq.Errorf(hq.CodeInvalid, "this controller signs with no key file to rotate: run hq key rotate where it has one"))
		return
	}
	fp, err := s.RotateKey()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	noteAudit(r, "", 0, "new key "+fp)
	writeJSON(w, http.StatusOK, map[string]string{"fingerprint": fp})
}
