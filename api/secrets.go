package api

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

func (s *Server) secretRoutes(r chi.Router) {
	r.Get("/secrets", s.listSecrets)
	r.Put("/secrets/*", s.putSecret)
	r.Get("/secrets/*", s.getSecret)
	r.Delete("/secrets/*", s.deleteSecret)
}

// secretName is the secret the path names after /secrets/: it may hold '/'.
func secretName(r *http.Request) (string, error) {
	n := chi.URLParam(r, "*")
	if !hq.ValidSecretName(n) {
		return "", hq.SecretNameError(n)
	}
	return n, nil
}

// putSecret takes {"value"} or {"value_base64"}. Nothing of the body is ever echoed: a body
// that does not decode is refused without saying where, since where is in the value.
func (s *Server) putSecret(w http.ResponseWriter, r *http.Request) {
	name, err := secretName(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Value       *string `json:"value"`
		ValueBase64 *string `json:"value_base64"`
	}
	body, err := readBody(w, r, nil)
	if err == nil && unmarshal(body, &req) != nil {
		err = hq.Errorf(hq.CodeBadRequest, `the body is not {"value": "…"} or {"value_base64": "…"} as JSON (the error is not shown: it would quote the value)`)
	}
	clear(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var value []byte
	switch {
	case (req.Value == nil) == (req.ValueBase64 == nil):
		err = hq.Errorf(hq.CodeInvalid, "give value or value_base64, one of them")
	case req.Value != nil:
		value = []byte(*req.Value)
	default:
		if value, err = base64.StdEncoding.DecodeString(strings.TrimSpace(*req.ValueBase64)); err != nil {
			err = hq.Errorf(hq.CodeInvalid, "value_base64 is not standard base64")
		}
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if dry, derr := dryRun(r); derr != nil || dry {
		if derr != nil {
			s.writeError(w, r, derr)
			return
		}
		plan, err := s.Store.PlanSecret(r.Context(), name)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, plan)
		return
	}
	res, err := s.Store.PutSecret(r.Context(), name, value)
	clear(value)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if res.Secret.Version == 1 {
		status = http.StatusCreated
	}
	writeJSON(w, status, res)
}

func (s *Server) listSecrets(w http.ResponseWriter, r *http.Request) {
	list, err := s.Store.Secrets(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string][]hq.SecretView{"secrets": list})
}

func (s *Server) getSecret(w http.ResponseWriter, r *http.Request) {
	name, err := secretName(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v, err := s.Store.Secret(r.Context(), name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) deleteSecret(w http.ResponseWriter, r *http.Request) {
	name, err := secretName(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.Store.DeleteSecret(r.Context(), name); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// putNodeSecretsKey registers the public half of a node's own key. Only the node itself may:
// whoever registers a node's key can open what is sealed to it.
func (s *Server) putNodeSecretsKey(w http.ResponseWriter, r *http.Request) {
	c, _ := r.Context().Value(callerKey).(caller)
	if c.node == "" {
		s.writeError(w, r, hq.Errorf(hq.CodeForbidden, "only the node itself registers its secrets key, with its own token"))
		return
	}
	var req struct {
		Key string `json:"key"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	changed, err := s.Store.SetNodeSecretsKey(r.Context(), c.node, strings.TrimSpace(req.Key))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"key": req.Key, "changed": changed})
}
