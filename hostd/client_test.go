package hostd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// errorServer answers every request with status and body.
func errorServer(t *testing.T, status int, body string) *client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return newClient([]string{srv.URL}, "web-1", "tok")
}

func TestControllerErrorKeepsCodeAndDetails(t *testing.T) {
	c := errorServer(t, http.StatusUnprocessableEntity, `{"error":{"code":"invalid","message":"the report names resources the declaration does not",
		"details":[{"field":"results[0].resource","message":"app/gone is not declared"},{"field":"results[2].outcome","message":"must be a host outcome"}]}}`)
	_, err := c.report(t.Context(), &hq.Report{})
	ce, ok := errors.AsType[*controllerError](err)
	if !ok || ce.Status != http.StatusUnprocessableEntity {
		t.Fatalf("error %T %v, want a *controllerError with status 422", err, err)
	}
	if hq.ErrorCode(err) != hq.CodeInvalid {
		t.Fatalf("code %q through hq.ErrorCode", hq.ErrorCode(err))
	}
	api, ok := errors.AsType[*hq.Error](err)
	if !ok || len(api.Details) != 2 || api.Details[0] != (hq.FieldError{Field: "results[0].resource", Message: "app/gone is not declared"}) {
		t.Fatalf("details %+v", api)
	}
	want := "controller answered 422 Unprocessable Entity: the report names resources the declaration does not " +
		"(results[0].resource: app/gone is not declared; results[2].outcome: must be a host outcome)"
	if err.Error() != want {
		t.Fatalf("error %q\nwant %q", err, want)
	}
}

func TestControllerErrorWithoutTheAPIShape(t *testing.T) {
	for body, want := range map[string]string{
		"<html>bad gateway</html>":                 "controller answered 502 Bad Gateway",
		`{"error":{"code":"internal"}}`:            "controller answered 502 Bad Gateway: internal",
		`{"error":{"code":"x","details":[]}} junk`: "controller answered 502 Bad Gateway",
		`{"error":{"message":"upstream is down"}}`: "controller answered 502 Bad Gateway: upstream is down",
	} {
		_, _, err := errorServer(t, http.StatusBadGateway, body).declaration(t.Context(), 1, time.Second)
		if err == nil || err.Error() != want {
			t.Errorf("body %q: %v, want %q", body, err, want)
		}
		if ce, ok := errors.AsType[*controllerError](err); !ok || ce.Status != http.StatusBadGateway {
			t.Errorf("body %q: %T", body, err)
		}
	}
}

func TestControllerErrorNamesAFewDetails(t *testing.T) {
	e := &controllerError{StatusText: "422 Unprocessable Entity", API: &hq.Error{Code: hq.CodeInvalid, Message: "bad"}}
	for i := range 13 {
		e.API.Details = append(e.API.Details, hq.FieldError{Field: fmt.Sprintf("f%d", i), Message: "m"})
	}
	if s := e.Error(); !strings.HasSuffix(s, "f9: m; and 3 more)") || strings.Contains(s, "f10") {
		t.Fatalf("error %q", s)
	}
}

// TestReporterLogsARefusedReportsFields: a report the controller refuses as invalid is logged
// with what it said about each field.
func TestReporterLogsARefusedReportsFields(t *testing.T) {
	c := errorServer(t, http.StatusUnprocessableEntity, `{"error":{"code":"invalid","message":"the report names resources the declaration does not",
		"details":[{"field":"results[0].resource","message":"app/gone is not declared"}]}}`)
	logs := &logBuffer{}
	r := newReporter(c, slog.New(slog.NewTextHandler(logs, nil)), make(chan delivered))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); r.run(ctx) }()
	defer func() { cancel(); <-done }()
	r.submit(&hq.Report{Generation: 1})
	waitFor(t, 5*time.Second, "the refusal in the log", func() bool {
		return strings.Contains(logs.String(), "results[0].resource: app/gone is not declared")
	})
}

// With several controllers, a call that finds nobody at one moves the next call to the next,
// and a controller's answer, even an error, does not.
func TestClientMovesOnWhenAControllerIsGone(t *testing.T) {
	answered := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"key":"k"}`)
	}))
	t.Cleanup(answered.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	c := newClient([]string{gone.URL, answered.URL}, "web-1", "tok")
	_, err := c.controllerKey(t.Context())
	if err == nil || !strings.Contains(err.Error(), "trying "+answered.URL+" next") {
		t.Fatalf("first call: %v, want a refusal naming the next controller", err)
	}
	if k, err := c.controllerKey(t.Context()); err != nil || k != "k" {
		t.Fatalf("second call: %q %v, want the other controller's key", k, err)
	}
	if c.base() != answered.URL {
		t.Fatalf("calls go to %s, want %s", c.base(), answered.URL)
	}
	refusing := errorServer(t, http.StatusServiceUnavailable, `{"error":{"code":"unavailable"}}`)
	refusing.bases = append(refusing.bases, answered.URL)
	refusing.controllerKey(t.Context())
	if refusing.at != 0 {
		t.Fatal("a controller that answered 503 was left for another")
	}
}
