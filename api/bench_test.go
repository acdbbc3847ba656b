package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// BenchmarkIngestNoChange500 posts a 500-resource report in which nothing changed, through the
// whole HTTP handler: auth, decode, validation, one transaction. This is the steady state of a
// mesh: every node reporting every interval that all is as it was.
func BenchmarkIngestNoChange500(b *testing.B) { benchmarkIngest(b, false, false) }

// BenchmarkIngestOneFailing500 is the same report with one resource failing every attempt:
// the controller must load the node's rows and count the failure on every report.
func BenchmarkIngestOneFailing500(b *testing.B) { benchmarkIngest(b, true, false) }

// BenchmarkIngestNotARepeat500 is a report that moves nothing but does not repeat the last one
// (one result says changed every other time), so it is taken in whole: checked against the
// declaration, tallied, stored as a report of its own. Each host's first report after it
// applied a declaration is one.
func BenchmarkIngestNotARepeat500(b *testing.B) { benchmarkIngest(b, false, true) }

func benchmarkIngest(b *testing.B, failing, alternate bool) {
	// One node posting from every core: its own bounds are counted, and never reached.
	f := setupWith(b, false, db.Options{StuckAttempts: 1 << 30}, func(s *Server) {
		s.ReportsPerNode, s.NodeReportRate, s.NodeReportBurst = 1<<10, 1e9, 1<<30
	})
	tok := f.node("web-1")
	rs := make([]hq.Resource, 500)
	for i := range rs {
		rs[i] = hq.Resource{Name: fmt.Sprintf("f%03d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/f%03d", i), Content: "x\n"}
	}
	ctx := b.Context()
	if _, err := f.store.PutModule(ctx, "app", rs); err != nil {
		b.Fatal(err)
	}
	if _, err := f.store.Assign(ctx, "web-1", "app", nil, nil); err != nil {
		b.Fatal(err)
	}
	d, err := f.store.Compose(ctx, "web-1", "bench")
	if err != nil {
		b.Fatal(err)
	}
	rep := hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest, Signature: d.Signature, Results: make([]hq.Result, len(rs))}
	for i, r := range rs {
		rep.Results[i] = hq.Result{Module: "app", Resource: r.Name, Outcome: hq.StateApplied, Attempted: true, DurationMS: 1}
	}
	if failing {
		rep.Results[250] = hq.Result{Module: "app", Resource: rs[250].Name, Outcome: hq.StateFailed, Attempted: true, Error: "validate: exit status 1"}
	}
	body, err := json.Marshal(rep)
	if err != nil {
		b.Fatal(err)
	}
	other := body
	if alternate {
		rep.Results[7].Changed = true // not attempted: it moves nothing
		if other, err = json.Marshal(rep); err != nil {
			b.Fatal(err)
		}
	}
	var n atomic.Int64
	h := f.handler
	post := func() error {
		body := body
		if n.Add(1)%2 == 0 {
			body = other
		}
		req := httptest.NewRequest("POST", "/api/v1/nodes/web-1/reports", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			return fmt.Errorf("status %d: %s", w.Code, w.Body)
		}
		return nil
	}
	// The first report moves every resource; the rest change nothing but the failure count.
	if err := post(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	cpu := cpuTime(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			// Fatal may not be called from RunParallel's goroutines.
			if err := post(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s")
	reportCPU(b, cpu)
	b.ReportMetric(float64(f.server.repeatsTaken.Load())/float64(b.N), "unread/op")
}

// BenchmarkDeclaration500 answers a host's long-poll with its 500-resource declaration: compose
// from the pins, record the send, sign, write. A new revision on a fleet is this, once per node.
//
//	go test ./api -run '^$' -bench Declaration500 -benchtime 2000x
func BenchmarkDeclaration500(b *testing.B) {
	f := setup(b)
	tok := f.node("web-1")
	rs := make([]hq.Resource, 500)
	for i := range rs {
		rs[i] = hq.Resource{Name: fmt.Sprintf("f%03d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/f%03d", i), Content: "x\n"}
	}
	if _, err := f.store.PutModule(b.Context(), "app", rs); err != nil {
		b.Fatal(err)
	}
	if _, err := f.store.Assign(b.Context(), "web-1", "app", nil, nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := cpuTime(b)
	for b.Loop() {
		req := httptest.NewRequest("GET", "/api/v1/nodes/web-1/declaration?after=0", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		f.handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
	reportCPU(b, cpu)
}
