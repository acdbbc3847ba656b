package webui

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/testdb"
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
	nodes, err := u.store.ListNodes(ctx, meshFilter(db.NodeFilter{}))
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

// fillRollout places app on n nodes labelled role=web, has each report it applied at r1, and
// uploads r2 under a policy of ten canaries first: rollout 1, of n nodes, waiting on them.
func fillRollout(b *testing.B, u *bundle, n int) {
	b.Helper()
	ctx := context.Background()
	u.module(b, "app", file("conf"), file("motd"))
	for i := range n {
		if _, _, err := u.store.CreateLabelledNode(ctx, fmt.Sprintf("web-%04d", i), map[string]string{"role": "web", "zone": fmt.Sprint(i % 3)}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := u.store.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{Canary: 10, MaxUnavailable: hq.Amount{N: 10, Percent: true}}}); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		u.report(b, fmt.Sprintf("web-%04d", i), result("app", "conf", hq.StateApplied), result("app", "motd", hq.StateApplied))
	}
	u.module(b, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/conf", Content: "2\n"}, file("motd"))
	ro, err := u.store.GetRollout(ctx, 1)
	if err != nil || len(ro.Progress) != n {
		b.Fatalf("rollout 1: %d nodes, %v", len(ro.Progress), err)
	}
}

// BenchmarkRolloutPage serves /rollouts/1 for a rollout of 1,000 nodes through the whole
// handler path: the rollout with every node's progress, its history, the nodes' statuses to
// filter and page them by, and the first page of 200.
func BenchmarkRolloutPage(b *testing.B) {
	u := setup(b)
	fillRollout(b, u, 1000)
	for _, path := range []string{"/rollouts/1", "/rollouts/1?status=converged&selector=zone%3D1"} {
		b.Run(path, func(b *testing.B) {
			req := httptest.NewRequest("GET", path, nil)
			req.SetBasicAuth("op", token)
			var size int
			for b.Loop() {
				w := httptest.NewRecorder()
				u.handler.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", path, w.Code)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/page")
		})
	}
}

// fillHistory writes, in SQL, n nodes with a day of reports: each node's row current a day
// ago, older rows before it (which the chart must not read), and one node in ten changing
// outcome every three hours through the day.
func fillHistory(b *testing.B, u *bundle, n int) {
	b.Helper()
	dsn := u.path
	if !testdb.Postgres() {
		dsn = "file:" + u.path + "?_pragma=busy_timeout(10000)" // the store's workers write too
	}
	conn, err := sql.Open(testdb.Driver(u.path), dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.Begin()
	if err != nil {
		b.Fatal(err)
	}
	node, err := tx.Prepare(testdb.Rebind(`INSERT INTO nodes (name, token_hash, created_at) VALUES (?, ?, ?)`))
	if err != nil {
		b.Fatal(err)
	}
	report, err := tx.Prepare(testdb.Rebind(`INSERT INTO reports (node, generation, digest, summary, outcome_digest, applied, failed, at, last_at)
		VALUES (?, 1, 'sha256:x', 'applied 5 resource(s)', ?, 5, ?, ?, ?)`))
	if err != nil {
		b.Fatal(err)
	}
	now := u.clock.now()
	day := now.Add(-24 * time.Hour)
	for i := range n {
		name := fmt.Sprintf("node-%05d", i)
		if _, err := node.Exec(name, fmt.Sprintf("hash-%d", i), hq.FormatTime(day.Add(-30*24*time.Hour))); err != nil {
			b.Fatal(err)
		}
		// (at, last_at, failed): five old rows, the one standing a day ago, then the day's.
		type row struct {
			at, last time.Time
			failed   int
		}
		var rows []row
		for k := range 5 {
			at := day.Add(-time.Duration(10-k) * 24 * time.Hour)
			rows = append(rows, row{at, at.Add(23 * time.Hour), k % 2})
		}
		if i%10 == 0 {
			rows = append(rows, row{day.Add(-time.Hour), day.Add(time.Hour), 0})
			for k := range 8 {
				at := day.Add(time.Duration(3*k)*time.Hour + 2*time.Hour)
				rows = append(rows, row{at, at.Add(3*time.Hour - time.Minute), (k + 1) % 2})
			}
		} else {
			rows = append(rows, row{day.Add(-time.Hour), now, 0})
		}
		for _, r := range rows {
			if _, err := report.Exec(name, fmt.Sprint(r.failed), r.failed, hq.FormatTime(r.at), hq.FormatTime(r.last)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkMeshHistory is the one query behind the mesh page's chart of the last day, for
// 10,000 nodes with 60,000 report rows older than the day and 17,000 in it.
func BenchmarkMeshHistory(b *testing.B) {
	u := setup(b)
	fillHistory(b, u, 10000)
	ctx := context.Background()
	now := u.clock.now()
	for b.Loop() {
		h, err := u.store.ConvergedHistory(ctx, historyStart(now), time.Hour, historyHours)
		if err != nil || len(h) != historyHours {
			b.Fatalf("%d moments, %v", len(h), err)
		}
		if last := h[len(h)-1]; last.Converged+last.NotConverged != 10000 {
			b.Fatalf("now: %+v", last)
		}
	}
}

// BenchmarkUnifiedDiff compares two texts of about 64 KiB, the most the diff page compares:
// with a line in a hundred changed, and with every line changed, where the alignment gives up
// at maxDiffEdits.
func BenchmarkUnifiedDiff(b *testing.B) {
	for _, every := range []int{100, 1} {
		var x, y strings.Builder
		for i := 0; y.Len() < maxDiffText-64; i++ {
			fmt.Fprintf(&x, "line %d of the configuration\n", i)
			if i%every == 0 {
				fmt.Fprintf(&y, "line %d of the new configuration\n", i)
			} else {
				fmt.Fprintf(&y, "line %d of the configuration\n", i)
			}
		}
		b.Run(fmt.Sprintf("one line in %d changed", every), func(b *testing.B) {
			for b.Loop() {
				if d := unifiedDiff(x.String(), y.String()); d.Skipped != "" || len(d.Hunks) == 0 || d.Coarse != (every == 1) {
					b.Fatalf("skipped %q, coarse %v", d.Skipped, d.Coarse)
				}
			}
		})
	}
}
