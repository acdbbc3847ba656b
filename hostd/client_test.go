package hostd

import (
	"context"
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
