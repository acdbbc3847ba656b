package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/meshhq/hq"
)

// BenchmarkIngestNoChange500 posts a 500-resource report in which nothing changed, through the
// whole HTTP handler: auth, decode, validation, one transaction. This is the steady state of a
// mesh: every node reporting every interval that all is as it was.
func BenchmarkIngestNoChange500(b *testing.B) {
	f := setup(b)
	tok := f.node("web-1")
	rs := make([]hq.Resource, 500)
	for i := range rs {
		rs[i] = hq.Resource{Name: fmt.Sprintf("f%03d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/f%03d", i), Content: "x\n"}
	}
	ctx := b.Context()
	if _, err := f.store.PutModule(ctx, "app", rs); err != nil {
		b.Fatal(err)
	}
	if _, err := f.store.Assign(ctx, "web-1", "app", false, nil); err != nil {
		b.Fatal(err)
	}
	d, err := f.store.Compose(ctx, "web-1", "bench")
	if err != nil {
		b.Fatal(err)
	}
	rep := hq.Report{Generation: d.Generation, Digest: d.Digest, Results: make([]hq.Result, len(rs))}
	for i, r := range rs {
		rep.Results[i] = hq.Result{Module: "app", Resource: r.Name, Outcome: hq.StateApplied, Attempted: true, DurationMS: 1}
	}
	body, _ := json.Marshal(rep)
	h := f.handler
	post := func() {
		req := httptest.NewRequest("POST", "/api/v1/nodes/web-1/reports", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	post() // the first report moves every resource to applied; the rest change nothing
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			post()
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "reports/s")
}
