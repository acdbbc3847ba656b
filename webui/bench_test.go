package webui

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/meshhq/hq"
)

// fillMesh registers n nodes with a plausible spread of statuses: most converged, some
// degraded, stuck, waiting on take, mid-change, and a few that never reported.
func fillMesh(b *testing.B, u *bundle, n int) {
	b.Helper()
	u.module(b, "base", file("motd"), file("resolv"), file("ntp"), file("sshd"), file("limits"))
	u.module(b, "app", file("conf"))
	u.module(b, "proxy", file("ca"), file("key"))
	base := func(outcome hq.State) []hq.Result {
		var rs []hq.Result
		for _, r := range []string{"motd", "resolv", "ntp", "sshd", "limits"} {
			rs = append(rs, result("base", r, outcome))
		}
		return rs
	}
	for i := range n {
		name := fmt.Sprintf("node-%04d", i)
		u.node(b, name)
		u.assign(b, name, "base")
		switch {
		case i%100 == 1: // never reports
		case i%50 == 2:
			u.assign(b, name, "app")
			for range 2 {
				u.report(b, name, append(base(hq.StateApplied), result("app", "conf", hq.StateFailed))...)
			}
		case i%50 == 3:
			u.assign(b, name, "app")
			u.report(b, name, append(base(hq.StateApplied), result("app", "conf", hq.StateFailed))...)
		case i%50 == 4:
			u.assign(b, name, "proxy")
			u.report(b, name, append(base(hq.StateApplied), result("proxy", "ca", hq.StateHeld), result("proxy", "key", hq.StateHeld))...)
		case i%50 == 5:
			u.report(b, name, base(hq.StatePending)...)
		default:
			u.report(b, name, base(hq.StateApplied)...)
		}
	}
}

// BenchmarkMeshPage serves / for 1,000 nodes through the whole handler path: auth, the
// store's queries, the page data, the template and the write.
func BenchmarkMeshPage(b *testing.B) {
	u := setup(b)
	fillMesh(b, u, 1000)
	req := httptest.NewRequest("GET", "/", nil)
	req.SetBasicAuth("op", token)
	var size int
	for b.Loop() {
		w := httptest.NewRecorder()
		u.handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("GET /: %d", w.Code)
		}
		size = w.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/page")
}

// BenchmarkMeshRender is the template's share of BenchmarkMeshPage: the page data is built
// once, outside the loop.
func BenchmarkMeshRender(b *testing.B) {
	u := setup(b)
	fillMesh(b, u, 1000)
	ctx := context.Background()
	st, err := u.store.MeshStatus(ctx)
	if err != nil {
		b.Fatal(err)
	}
	nodes, err := u.store.ListNodes(ctx, meshFilter(""))
	if err != nil {
		b.Fatal(err)
	}
	page := buildMesh(nodes, st, u.clock.now())
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := u.ui.pages["mesh"].Execute(&buf, page); err != nil {
			b.Fatal(err)
		}
	}
}
