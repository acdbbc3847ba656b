package webui

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
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
	nodes, err := u.store.ListNodes(ctx, meshFilter(db.NodeFilter{}, false))
	if err != nil {
		b.Fatal(err)
	}
	page := buildMesh(nodes, st, u.clock.Now())
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
func fillRollout(b testing.TB, u *bundle, n int) {
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
	conn := rawDB(b, u)
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
	now := u.clock.Now()
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
	// As ingest leaves them: each node's newest report is its last.
	if _, err := conn.Exec(`UPDATE nodes SET last_report_id = (SELECT MAX(r.id) FROM reports r WHERE r.node = nodes.name)`); err != nil {
		b.Fatal(err)
	}
}

// rawDB opens the bundle's database beside its store, for a fixture written in SQL.
func rawDB(b *testing.B, u *bundle) *sql.DB {
	b.Helper()
	dsn := u.path
	if !testdb.Postgres() {
		dsn = "file:" + u.path + "?_pragma=busy_timeout(10000)" // the store's workers write too
	}
	conn, err := sql.Open(testdb.Driver(u.path), dsn)
	if err != nil {
		b.Fatal(err)
	}
	return conn
}

// BenchmarkMeshHistory is the mesh page's chart of the last day, counted cold, for 10,000
// nodes with 68,000 report rows of which the chart reads 18,000 ("a steady day": 1 node in 10
// changed outcome), then with two more rows a node on the other nine in ten ("a day every node
// changed", as a new revision everywhere makes it: pending, then applied).
//
//	go test ./webui/ -run '^$' -bench MeshHistory -benchtime 20x -count 3
func BenchmarkMeshHistory(b *testing.B) {
	u := setup(b)
	fillHistory(b, u, 10000)
	ctx := context.Background()
	now := u.clock.Now()
	chart := func(b *testing.B) {
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
	b.Run("a steady day", chart)
	changeEveryNode(b, u)
	b.Run("a day every node changed", chart)
}

// changeEveryNode gives the nodes whose outcome did not change in the day (every name not
// ending in 0) what a new revision rolled out everywhere gives them: a report of a pending
// resource, and a minute later one of everything applied, which stands until now.
func changeEveryNode(b *testing.B, u *bundle) {
	b.Helper()
	conn := rawDB(b, u)
	defer conn.Close()
	now := u.clock.Now()
	at := now.Add(-14 * time.Hour)
	for _, r := range []struct {
		at, last time.Time
		pending  int
	}{{at, at.Add(30 * time.Second), 1}, {at.Add(time.Minute), now, 0}} {
		if _, err := conn.Exec(testdb.Rebind(`INSERT INTO reports (node, generation, digest, summary, outcome_digest, applied, pending, at, last_at)
			SELECT name, 2, 'sha256:y', 'a new revision', ?, 5 - ?, ?, ?, ? FROM nodes WHERE name NOT LIKE '%0'`),
			fmt.Sprint(r.pending), r.pending, r.pending, hq.FormatTime(r.at), hq.FormatTime(r.last)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := conn.Exec(`UPDATE nodes SET last_report_id = (SELECT MAX(r.id) FROM reports r WHERE r.node = nodes.name)`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUnifiedDiff compares two texts of about 64 KiB, the most the diff page compares:
// with a line in a hundred changed, and with every line changed.
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
				if d := unifiedDiff(x.String(), y.String()); d.Skipped != "" || len(d.Hunks) == 0 || (d.Cut != "") != (every == 1) {
					b.Fatalf("skipped %q, cut %q", d.Skipped, d.Cut)
				}
			}
		})
	}
}

// fleetSize is the fleet the page benchmarks read.
const fleetSize = 10_000

// fillFleet builds, mostly in SQL, what a controller holds after a day with n hosts: every
// node labelled role=web and region eu or us, app placed on all of them under a rollout policy
// and base on those in eu, each resource applied but on 1 node in 100 stuck in eu, 1 in 100
// stuck in us, 1 in 100 degraded and 1 in 100 silent; a day of reports, with 1 node in 10
// changing outcome every three hours; and a new revision of app rolling out over all n, its
// canaries in flight. The placements assign through the store, set-based, as an operator's PUT
// would; what hosts would have reported is written in SQL.
func fillFleet(b *testing.B, u *bundle, n int) {
	b.Helper()
	ctx := context.Background()
	conf := func(content string) hq.Resource {
		return hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: content}
	}
	u.module(b, "app", conf("listen 80\nworkers 4\n"), file("motd"))
	u.module(b, "base", file("ntp"), file("resolv"))
	conn := rawDB(b, u)
	defer conn.Close()
	exec := func(q string, args ...any) {
		b.Helper()
		if _, err := conn.Exec(testdb.Rebind(q), args...); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	now := u.clock.Now()
	day := now.Add(-24 * time.Hour)
	name := func(i int) string { return fmt.Sprintf("node-%05d", i) }
	region := func(i int) string { return []string{"eu", "us"}[i%2] }
	tx, err := conn.Begin()
	if err != nil {
		b.Fatal(err)
	}
	node, err := tx.Prepare(testdb.Rebind(`INSERT INTO nodes (name, token_hash, created_at, labels) VALUES (?, ?, ?, ?)`))
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := node.Exec(name(i), fmt.Sprintf("hash-%d", i), hq.FormatTime(day.Add(-30*24*time.Hour)),
			fmt.Sprintf(`{"region":%q,"role":"web"}`, region(i))); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}

	if _, err := u.store.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{Canary: 10, MaxUnavailable: hq.Amount{N: 10, Percent: true}}}); err != nil {
		b.Fatal(err)
	}
	if _, err := u.store.PutPlacement(ctx, hq.Placement{Name: "base-eu", Module: "base", Selector: "region=eu"}); err != nil {
		b.Fatal(err)
	}
	// The mover assigns past the first chunk in the background.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		web, err1 := u.store.GetPlacement(ctx, "web")
		base, err2 := u.store.GetPlacement(ctx, "base-eu")
		if err := errors.Join(err1, err2); err != nil {
			b.Fatal(err)
		}
		if web.Assigned == n && base.Assigned == (n+1)/2 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("placements assigned %d and %d of %d", web.Assigned, base.Assigned, n)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// What the hosts reported: everything applied, then the failures, through the triggers
	// that count them on the nodes and write their transitions.
	at := hq.FormatTime(day.Add(-time.Hour))
	exec(`UPDATE resource_states SET state = 'applied', attempts = 1, never_applied = 0, since = ? WHERE state = 'pending'`, at)
	const failing = `UPDATE resource_states SET state = ?, attempts = ?, consecutive_failures = ?, failing_since = ?, since = ?,
		last_error = 'validate: /usr/sbin/app -t exited 1: unknown directive "workers"' WHERE node = ? AND module = 'app' AND resource = 'conf'`
	status := func(i int) hq.Status {
		switch i % 100 {
		case 8, 9:
			return hq.StatusStuck
		case 13:
			return hq.StatusDegraded
		case 21:
			return hq.StatusSilent
		}
		return hq.StatusConverged
	}
	for i := range n {
		switch status(i) {
		case hq.StatusStuck:
			exec(failing, "failed", 2, 1, at, at, name(i))
			exec(failing, "stuck", 3, 2, at, at, name(i))
		case hq.StatusDegraded:
			exec(failing, "failed", 2, 1, at, at, name(i))
		}
	}
	exec(`UPDATE nodes SET applied_generation = generation, applied_digest = 'sha256:x', applied_at = ?, last_report_at = ?`,
		at, hq.FormatTime(now))

	// A day of reports, as fillHistory writes them, each row's counts those of its outcome.
	tx, err = conn.Begin()
	if err != nil {
		b.Fatal(err)
	}
	report, err := tx.Prepare(testdb.Rebind(`INSERT INTO reports (node, generation, digest, summary, outcome_digest, applied, failed, stuck, at, last_at)
		VALUES (?, 1, 'sha256:x', ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		resources := 2
		if region(i) == "eu" {
			resources = 4
		}
		type row struct {
			at, last      time.Time
			failed, stuck int
		}
		var rows []row
		for k := range 5 {
			at := day.Add(-time.Duration(10-k) * 24 * time.Hour)
			rows = append(rows, row{at, at.Add(23 * time.Hour), k % 2, 0})
		}
		last := now
		switch status(i) {
		case hq.StatusStuck:
			rows = append(rows, row{day.Add(-time.Hour), last, 0, 1})
		case hq.StatusDegraded:
			rows = append(rows, row{day.Add(-time.Hour), last, 1, 0})
		case hq.StatusSilent:
			last = now.Add(-time.Hour)
			rows = append(rows, row{day.Add(-time.Hour), last, 0, 0})
		default:
			if i%10 != 0 {
				rows = append(rows, row{day.Add(-time.Hour), last, 0, 0})
				break
			}
			rows = append(rows, row{day.Add(-time.Hour), day.Add(time.Hour), 0, 0})
			for k := range 8 {
				at := day.Add(time.Duration(3*k)*time.Hour + 2*time.Hour)
				rows = append(rows, row{at, at.Add(3*time.Hour - time.Minute), (k + 1) % 2, 0})
			}
		}
		for _, r := range rows {
			summary := fmt.Sprintf("applied %d resource(s)", resources-r.failed-r.stuck)
			if r.failed+r.stuck > 0 {
				summary += ", failed 1: app/conf"
			}
			if _, err := report.Exec(name(i), summary, fmt.Sprint(r.failed, r.stuck), resources-r.failed-r.stuck, r.failed, r.stuck,
				hq.FormatTime(r.at), hq.FormatTime(r.last)); err != nil {
				b.Fatal(err)
			}
		}
		if last != now {
			if _, err := tx.Exec(testdb.Rebind(`UPDATE nodes SET last_report_at = ? WHERE name = ?`), hq.FormatTime(last), name(i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	exec(`UPDATE nodes SET last_report_id = (SELECT MAX(r.id) FROM reports r WHERE r.node = nodes.name)`)

	// A new revision: the rollout over every node, its canaries sent it.
	u.module(b, "app", conf("listen 80\nworkers 8\n"), file("motd"))
	deadline = time.Now().Add(time.Minute)
	for {
		ro, err := u.store.GetRollout(ctx, 1)
		if err != nil {
			b.Fatal(err)
		}
		if len(ro.Progress) != n {
			b.Fatalf("rollout 1 of %d nodes, want %d", len(ro.Progress), n)
		}
		if ro.InFlight > 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("rollout 1 sent no canary: %s", ro.Line)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// BenchmarkPagesOf10000Nodes serves every page through the whole handler path (auth, the
// store's queries, the page data, the template and the write) over a store of 10,000 nodes.
// The mesh page counts its chart of the last day anew every time, as it does once a minute;
// last, it does so again on a day every node changed outcome (see changeEveryNode).
//
//	go test ./webui/ -run '^$' -bench PagesOf10000Nodes -benchtime 20x -count 3
func BenchmarkPagesOf10000Nodes(b *testing.B) {
	u := setup(b)
	fillFleet(b, u, fleetSize)
	for _, page := range []struct{ name, path string }{
		{"mesh", "/"},
		{"mesh filtered", "/?status=stuck&selector=region%3Deu"},
		{"node", "/nodes/node-00108"},
		{"rollouts", "/rollouts"},
		{"rollout", "/rollouts/1"},
		{"rollout next page", "/rollouts/1?after=node-05000"},
		{"placements", "/placements"},
		{"placement", "/placements/web"},
		{"modules", "/modules"},
		{"module", "/modules/app"},
		{"module nodes", "/modules/app/nodes"},
		{"revision", "/modules/app/revisions/2"},
		{"diff", "/modules/app/diff?from=1&to=2"},
		{"login", "/login"},
	} {
		b.Run(page.name, servePage(u, page.path))
	}
	changeEveryNode(b, u)
	b.Run("mesh on a day every node changed", servePage(u, "/"))
}

// servePage is a benchmark of GET path through the whole handler, the chart counted anew.
func servePage(u *bundle, path string) func(*testing.B) {
	return func(b *testing.B) {
		req := httptest.NewRequest("GET", path, nil)
		req.SetBasicAuth("op", token)
		var size int
		for b.Loop() {
			u.ui.history.forget()
			w := httptest.NewRecorder()
			u.handler.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
			}
			size = w.Body.Len()
		}
		b.ReportMetric(float64(size), "bytes/page")
	}
}

// forget drops the chart's counts, so the next mesh page counts them again.
func (h *historyCache) forget() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.points = nil
}

// BenchmarkDriftPage serves the node page of a node with 20 drifts of 16 KiB of random lines
// found against 64 KiB declared, or 16 KiB declared, and reports the page's size.
//
//	go test ./webui -run '^$' -bench DriftPage
func BenchmarkDriftPage(b *testing.B) {
	for _, declared := range []int{64 << 10, 16 << 10} {
		b.Run(fmt.Sprintf("declared %d KiB", declared>>10), func(b *testing.B) {
			u := driftedNode(b, declared, hq.MaxDriftFound)
			size := 0
			for b.Loop() {
				code, body := u.get(b, "/nodes/web-1")
				if code != 200 {
					b.Fatalf("%d %s", code, body)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "page-bytes")
		})
	}
}

// BenchmarkRevisionDiffPage serves the diff of two revisions of 50 files of 64 KiB of random
// lines, and reports the page's size.
//
//	go test ./webui -run '^$' -bench RevisionDiffPage
func BenchmarkRevisionDiffPage(b *testing.B) {
	u := revisedModule(b)
	size := 0
	for b.Loop() {
		code, body := u.get(b, "/modules/big/diff?from=1&to=2")
		if code != 200 {
			b.Fatalf("%d %s", code, body)
		}
		size = len(body)
	}
	b.ReportMetric(float64(size), "page-bytes")
}
