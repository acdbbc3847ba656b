package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/meshhq/hq"
)

// Body limits: a module or a report of thousands of resources fits; anything larger is refused
// before it is read.
const (
	maxBody      = 8 << 20
	defaultLimit = 50
	maxListLimit = 1000
)

// decode reads one JSON value into v, refusing unknown fields, trailing data and oversized bodies.
func decode(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return hq.Errorf(hq.CodeTooLarge, "request body is larger than %d bytes", maxBody)
		}
		if errors.Is(err, io.EOF) {
			return hq.Errorf(hq.CodeBadRequest, "request body is empty; send JSON")
		}
		return hq.Errorf(hq.CodeBadRequest, "request body is not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return hq.Errorf(hq.CodeTooLarge, "request body is larger than %d bytes", maxBody)
		}
		return hq.Errorf(hq.CodeBadRequest, "request body has data after the JSON value")
	}
	return nil
}

// ifMatch reads If-Match: "G". Absent, it returns nil: the write is unconditional.
func ifMatch(r *http.Request) (*int64, error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" {
		return nil, nil
	}
	g, err := strconv.ParseInt(strings.Trim(strings.TrimPrefix(h, "W/"), `"`), 10, 64)
	if err != nil || g < 0 {
		return nil, hq.Errorf(hq.CodeBadRequest, "If-Match must be a generation in quotes, like \"42\"")
	}
	return &g, nil
}

func setETag(w http.ResponseWriter, gen int64) {
	w.Header().Set("ETag", fmt.Sprintf("%q", strconv.FormatInt(gen, 10)))
}

// limit reads ?limit=, bounded.
func limit(r *http.Request) (int64, error) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return defaultLimit, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > maxListLimit {
		return 0, hq.Errorf(hq.CodeBadRequest, "limit must be a number from 1 to %d", maxListLimit)
	}
	return n, nil
}

// name reads a URL parameter that names a node, module or resource, and checks it.
func name(r *http.Request, param string) (string, error) {
	v := chi.URLParam(r, param)
	if !hq.ValidName(v) {
		return "", hq.NameError(param, v)
	}
	return v, nil
}
