package api

import (
	"cmp"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"

	"github.com/meshhq/hq"
)

// writeError answers with err's code and message; an error without a code is logged and
// answered as a bare 500, so no internal detail reaches the client.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e, ok := errors.AsType[*hq.Error](err)
	status := hq.ErrorCode(err).HTTPStatus()
	if !ok || status == http.StatusInternalServerError {
		s.Log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		e, status = hq.Errorf(hq.CodeInternal, "internal error"), http.StatusInternalServerError
	}
	if e.Generation != nil {
		setETag(w, *e.Generation)
	}
	noteAudit(r, "", 0, e.Message)
	switch status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="hq"`)
	case http.StatusServiceUnavailable:
		s.setRetryAfter(w)
	}
	writeJSON(w, status, map[string]*hq.Error{"error": e})
}

// nosniff is X-Content-Type-Options' one value, shared by every answer rather than made for
// each: a browser reads a JSON answer as JSON, never as a page or a script.
var nosniff = []string{"nosniff"}

// jsonHeaders sets an answer's type, JSON, and nosniff.
func jsonHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h["X-Content-Type-Options"] = nosniff
}

// writeJSON writes v indented, for people reading answers with curl.
func writeJSON(w http.ResponseWriter, status int, v any) {
	jsonHeaders(w)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		slog.Debug("write response", "err", err) // the client went away
	}
}

// writeEncodedJSON writes b, a value already encoded as JSON, unindented: the answers a
// fleet asks for in bulk.
func writeEncodedJSON(w http.ResponseWriter, status int, b []byte) {
	jsonHeaders(w)
	w.WriteHeader(status)
	if _, err := w.Write(append(b, '\n')); err != nil {
		slog.Debug("write response", "err", err) // the client went away
	}
}

// setRetryAfter asks the client to come back in RetryAfter to twice that many seconds (2 to 4
// by default), jittered so that a fleet turned away at once does not return at once.
func (s *Server) setRetryAfter(w http.ResponseWriter) {
	least := cmp.Or(s.RetryAfter, 2)
	w.Header().Set("Retry-After", strconv.Itoa(least+rand.IntN(least+1)))
}
