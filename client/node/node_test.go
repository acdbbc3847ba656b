package node

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// errorServer answers every request with status and body.
func errorServer(t *testing.T, status int, body string) *Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return New([]string{srv.URL}, 0, "web-1", "tok", &http.Client{})
}

func TestAnErrorKeepsCodeAndDetails(t *testing.T) {
	t.Parallel()
	c := errorServer(t, http.StatusUnprocessableEntity, `{"error":{"code":"invalid","message":"the report names resources the declaration does not",
		"details":[{"field":"results[0].resource","message":"app/gone is not declared"},{"field":"results[2].outcome","message":"must be a host outcome"}]}}`)
	_, call := c.Report(t.Context(), Body{[]byte(`{}`)})
	if call.Err != nil || call.Status != http.StatusUnprocessableEntity {
		t.Fatalf("call %+v: an answer is no Err, and its status is kept", call)
	}
	err := call.Failure()
	ce, ok := errors.AsType[*Error](err)
	if !ok || ce.Status != http.StatusUnprocessableEntity {
		t.Fatalf("error %T %v, want an *Error with status 422", err, err)
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

func TestAnErrorWithoutTheAPIShape(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"<html>bad gateway</html>":                 "controller answered 502 Bad Gateway",
		`{"error":{"code":"internal"}}`:            "controller answered 502 Bad Gateway: internal",
		`{"error":{"code":"x","details":[]}} junk`: "controller answered 502 Bad Gateway",
		`{"error":{"message":"upstream is down"}}`: "controller answered 502 Bad Gateway: upstream is down",
	} {
		_, call := errorServer(t, http.StatusBadGateway, body).Declaration(t.Context(), 1, time.Second)
		err := call.Failure()
		if err == nil || err.Error() != want {
			t.Errorf("body %q: %v, want %q", body, err, want)
		}
		if ce, ok := errors.AsType[*Error](err); !ok || ce.Status != http.StatusBadGateway {
			t.Errorf("body %q: %T", body, err)
		}
	}
}

func TestAnErrorNamesAFewDetails(t *testing.T) {
	t.Parallel()
	e := &Error{StatusText: "422 Unprocessable Entity", API: &hq.Error{Code: hq.CodeInvalid, Message: "bad"}}
	for i := range 13 {
		e.API.Details = append(e.API.Details, hq.FieldError{Field: fmt.Sprintf("f%d", i), Message: "m"})
	}
	if s := e.Error(); !strings.HasSuffix(s, "f9: m; and 3 more)") || strings.Contains(s, "f10") {
		t.Fatalf("error %q", s)
	}
}

// A 503 with Retry-After is the controller shedding load, and says how long to stay away.
func TestOverloadedReadsTheWait(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	_, call := New([]string{srv.URL}, 0, "web-1", "tok", &http.Client{}).Report(t.Context(), Body{[]byte(`{}`)})
	if wait, ok := Overloaded(call.Failure()); !ok || wait != 7*time.Second || call.RetryAfter != 7*time.Second {
		t.Fatalf("overloaded %v %s, call %+v", ok, wait, call)
	}
	if _, ok := Overloaded(errors.New("refused")); ok {
		t.Fatal("an error with no answer is not an overload")
	}
}

// With several controllers, a call that finds nobody at one moves the next call to the next,
// and a controller's answer, even an error, does not.
func TestAClientMovesOnWhenAControllerIsGone(t *testing.T) {
	t.Parallel()
	answered := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"key":"k"}`)
	}))
	t.Cleanup(answered.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	c := New([]string{gone.URL, answered.URL}, 0, "web-1", "tok", &http.Client{})
	_, err := c.ControllerKey(t.Context())
	if err == nil || !strings.Contains(err.Error(), "trying "+answered.URL+" next") {
		t.Fatalf("first call: %v, want a refusal naming the next controller", err)
	}
	if k, err := c.ControllerKey(t.Context()); err != nil || k != "k" {
		t.Fatalf("second call: %q %v, want the other controller's key", k, err)
	}
	if c.Base() != answered.URL || c.Controller() != 1 {
		t.Fatalf("calls go to %s, want %s", c.Base(), answered.URL)
	}
	refusing := errorServer(t, http.StatusServiceUnavailable, `{"error":{"code":"unavailable"}}`)
	refusing.bases = append(refusing.bases, answered.URL)
	refusing.ControllerKey(t.Context())
	if refusing.Controller() != 0 {
		t.Fatal("a controller that answered 503 was left for another")
	}
}

// The node's token goes with its own calls and not with the key's, which anyone may read.
func TestTheTokenGoesOnlyWithTheNodesCalls(t *testing.T) {
	t.Parallel()
	auth := make(chan string, 3)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth <- r.URL.Path + " " + r.Header.Get("Authorization")
		switch r.URL.Path {
		case "/api/v1/controller-key":
			fmt.Fprint(w, `{"key":"k"}`)
		case "/api/v1/nodes/web%2F1/declaration", "/api/v1/nodes/web/1/declaration":
			w.WriteHeader(http.StatusNotModified)
		default:
			fmt.Fprint(w, `{"report_id":3}`)
		}
	}))
	t.Cleanup(srv.Close)
	c := New([]string{srv.URL + "/"}, 0, "web/1", "tok", &http.Client{})
	if _, err := c.ControllerKey(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d, call := c.Declaration(t.Context(), 4, 0); d != nil || call.Failure() != nil || call.Status != http.StatusNotModified {
		t.Fatalf("a 304: %v %+v", d, call)
	}
	if rr, call := c.Report(t.Context(), Body{[]byte(`{"generation":`), []byte(`1}`)}); call.Failure() != nil || rr.ReportID != 3 {
		t.Fatalf("a report: %+v %+v", rr, call)
	}
	for _, want := range []string{"/api/v1/controller-key ", "/api/v1/nodes/web/1/declaration Bearer tok", "/api/v1/nodes/web/1/reports Bearer tok"} {
		if got := <-auth; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		" 7 ":                           7 * time.Second,
		"0":                             0,
		"-5":                            0,
		"soon":                          0,
		"999999":                        MaxRetryAfter,
		"Tue, 01 Dec 2026 08:00:30 GMT": 30 * time.Second,
		"Tue, 01 Dec 2026 07:59:00 GMT": 0,
		"Wed, 01 Dec 2027 08:00:00 GMT": MaxRetryAfter,
	} {
		if got := ParseRetryAfter(h, now); got != want {
			t.Errorf("Retry-After %q: %s, want %s", h, got, want)
		}
	}
}
