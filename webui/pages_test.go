package webui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

const evil = "<script>alert(1)</script>"

func TestDataIsEscaped(t *testing.T) {
	b := setup(t)
	b.node(t, "web-1")
	b.module(t, "app", file("conf"), file("ca"))
	b.assign(t, "web-1", "app")
	failed := result("app", "conf", hq.StateFailed)
	failed.Error = "validate: " + evil
	held := result("app", "ca", hq.StateHeld)
	held.HoldReason = "would overwrite " + evil
	b.report(t, "web-1", failed, held)
	for _, path := range []string{"/", "/nodes/web-1"} {
		code, body := b.get(t, path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d", path, code)
		}
		if strings.Contains(body, "<script") {
			t.Fatalf("GET %s carries a script tag:\n%s", path, body)
		}
	}
	_, body := b.get(t, "/nodes/web-1")
	want := "&lt;script&gt;alert(1)&lt;/script&gt;"
	for _, part := range []string{"validate: " + want, "would overwrite " + want} {
		if !strings.Contains(body, part) {
			t.Fatalf("node page does not show %q as text", part)
		}
	}
}

func TestMeshPage(t *testing.T) {
	b := setup(t)
	for _, n := range []string{"ok-1", "stuck-1", "held-1", "new-1", "mid-1"} {
		b.node(t, n)
	}
	b.module(t, "base", file("motd"))
	b.module(t, "app", file("conf"))
	b.module(t, "proxy", file("ca"), file("key"))
	for n, mods := range map[string][]string{"ok-1": {"base"}, "stuck-1": {"base", "app"}, "held-1": {"proxy"}, "mid-1": {"base"}} {
		for _, m := range mods {
			b.assign(t, n, m)
		}
	}
	b.report(t, "ok-1", result("base", "motd", hq.StateApplied))
	for range 2 {
		b.report(t, "stuck-1", result("base", "motd", hq.StateApplied), result("app", "conf", hq.StateFailed))
	}
	b.report(t, "held-1", result("proxy", "ca", hq.StateHeld), result("proxy", "key", hq.StateHeld))
	b.report(t, "mid-1", result("base", "motd", hq.StatePending))
	b.clock.Advance(90 * time.Second)

	code, body := b.get(t, "/")
	if code != http.StatusOK {
		t.Fatalf("GET /: %d", code)
	}
	for _, want := range []string{
		`<meta http-equiv="refresh" content="10">`,
		`id="count-converged"><span class="n">1</span><a href="/?status=converged"><span class="badge t-good">converged</span></a>`,
		`id="count-stuck"><span class="n">1</span><a href="/?status=stuck"><span class="badge t-bad">stuck</span></a>`,
		`id="count-waiting-on-take"><span class="n">1</span>`,
		`id="count-new"><span class="n">1</span>`,
		`id="count-mid-change"><span class="n">1</span>`,
		`id="count-silent"><span class="n">0</span>`,
		`<td class="mono">app/conf</td><td><span class="badge t-warn">node-local</span></td>`,
		"never applied",
		"waiting on take: proxy (2 held)",
		"mid-change: 1 pending",
		`title="2026-11-30T03:00:00Z">1m ago</time>`,
		`<a href="/nodes/stuck-1">stuck-1</a>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/ lacks %q", want)
		}
	}
	if strings.Contains(body, "<script") {
		t.Error("/ carries a script tag")
	}

	code, body = b.get(t, "/nodes/stuck-1")
	if code != http.StatusOK {
		t.Fatalf("GET /nodes/stuck-1: %d", code)
	}
	for _, want := range []string{
		`<span class="badge t-bad">stuck</span>`,
		"stuck: app/conf (never applied, 2 attempts since 2026-11-30T03:00:00Z)",
		`<td class="mono"><a href="/modules/app">app</a></td><td class="num"><a href="/modules/app/revisions/1">1</a></td>`,
		`<td class="taken">not taken</td>`,
		`id="report-line">applied 1 resource(s), 1 `,
		`<span class="badge t-warn">failed</span></td><td><span class="badge t-bad">stuck</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/nodes/stuck-1 lacks %q", want)
		}
	}
}

// The mesh page says how this controller's hosts hear of a change: holding a long-poll, or,
// past HQ_MAX_POLLS, polling on their interval; with none polling it says only the first.
func TestMeshPageSaysHowHostsPoll(t *testing.T) {
	b := setup(t)
	waiting, polling := 5, 15
	b.ui.Polls = func() (int, int) { return waiting, polling }
	_, body := b.get(t, "/")
	if want := `<span id="polls-waiting">5</span> of the hosts hold a long-poll to this controller, and <span id="polls-polling">15</span> poll it on their interval`; !strings.Contains(body, want) {
		t.Errorf("/ lacks %q", want)
	}
	polling = 0
	if _, body = b.get(t, "/"); !strings.Contains(body, `<span id="polls-waiting">5</span> of the hosts hold a long-poll to this controller; the others may be between polls or talking to another controller</p>`) {
		t.Errorf("/ with no host polling says: %s", body[strings.Index(body, `id="polls"`):][:200])
	}
}

func TestUnknownNodeIs404(t *testing.T) {
	b := setup(t)
	if code, body := b.get(t, "/nodes/ghost"); code != http.StatusNotFound || !strings.Contains(body, "no node ghost") {
		t.Fatalf("GET /nodes/ghost: %d %s", code, body)
	}
}

// A template that fails midway must not have sent the part before the failure.
func TestTemplateErrorSendsNoHalfPage(t *testing.T) {
	b := setup(t)
	w := httptest.NewRecorder()
	// messagePage has no Total, which the mesh template reads after the page's head.
	b.ui.render(w, httptest.NewRequest("GET", "/", nil), http.StatusOK, "mesh", &messagePage{chrome: chrome{Title: "x"}})
	if w.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", w.Code)
	}
	if strings.Contains(w.Body.String(), "<html") {
		t.Fatalf("half a page was sent: %q", w.Body.String())
	}
	if !strings.Contains(b.log.String(), "webui: render") {
		t.Fatal("the template error was not logged")
	}
}

func TestAgo(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "just now", 5 * time.Second: "5s ago", 3*time.Minute + 59*time.Second: "3m ago",
		5 * time.Hour: "5h ago", 72 * time.Hour: "3d ago", -30 * time.Second: "30s ahead",
	} {
		if got := ago(d); got != want {
			t.Errorf("ago(%s) = %q, want %q", d, got, want)
		}
	}
	if w := at(time.Time{}, time.Now()); w.Rel != "never" || w.Abs != "" {
		t.Errorf("zero time: %+v", w)
	}
}

// The page of a deleted node says it was deleted and when, and still shows its history.
func TestDeletedNodePage(t *testing.T) {
	b := setup(t)
	b.node(t, "web-1")
	b.module(t, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x\n"})
	b.assign(t, "web-1", "app")
	b.report(t, "web-1", result("app", "conf", hq.StateApplied))
	if _, err := b.store.DeleteNode(context.Background(), "web-1", nil); err != nil {
		t.Fatal(err)
	}
	code, body := b.get(t, "/nodes/web-1")
	if code != http.StatusOK || !strings.Contains(body, "deleted at "+hq.FormatTime(b.clock.Now())) || !strings.Contains(body, "removed") {
		t.Fatalf("GET /nodes/web-1 of a deleted node: %d\n%s", code, body)
	}
}

// A drifted small text file shows on its node's page as a unified diff of the file as
// declared (templates rendered for the node) against what hostd found there.
func TestNodePageShowsADriftedFileAsADiff(t *testing.T) {
	b := setup(t)
	b.node(t, "web-1")
	b.module(t, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "name {{.Node}}\nport 80\nlog on\n"}, file("other"))
	b.assign(t, "web-1", "app")
	b.report(t, "web-1", result("app", "conf", hq.StateApplied), result("app", "other", hq.StateApplied))
	conf := result("app", "conf", hq.StateApplied)
	conf.Changed, conf.Drift, conf.DriftDetail, conf.DriftFound = true, true, "content sha256:aa (want sha256:bb)", "name web-1\nport 8080\nlog on\n"
	other := result("app", "other", hq.StateApplied)
	other.Changed, other.Drift, other.DriftDetail = true, true, "mode 0600 (want 0644)"
	b.report(t, "web-1", conf, other)
	code, body := b.get(t, "/nodes/web-1")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	body = strings.ReplaceAll(body, "&#43;", "+") // html/template writes + so
	for _, want := range []string{"--- app/conf as declared", "+++ app/conf as found", "@@ -1,3 +1,3 @@",
		`<span class="del">-port 80</span>`, `<span class="add">+port 8080</span>`, " name web-1", "mode 0600 (want 0644)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the node page lacks %q", want)
		}
	}
	if n := strings.Count(body, `<pre class="diff">`); n != 1 {
		t.Errorf("%d diffs on the page, want 1 (the mode change has none)", n)
	}
}

// The node page shows what runs for each container, and says of one that runs an earlier spec
// than declared that it does.
func TestNodePageShowsContainers(t *testing.T) {
	b := setup(t)
	b.node(t, "web-1")
	img := "localhost/app@sha256:" + strings.Repeat("ab", 32)
	b.module(t, "app", hq.Resource{Name: "web", Kind: hq.KindContainer, Image: img},
		hq.Resource{Name: "db", Kind: hq.KindContainer, Image: img}, file("conf"))
	b.assign(t, "web-1", "app")
	web, db := result("app", "web", hq.StateApplied), result("app", "db", hq.StateApplied)
	web.Container = &hq.ContainerStatus{ID: "4f1c2d3e4f5a6b7c8d9e", ImageDigest: "sha256:" + strings.Repeat("cd", 32),
		StartedAt: time.Now().Add(-time.Hour), Restarts: 3, Health: hq.HealthHealthy, Spec: "sha256:now"}
	db.Container = &hq.ContainerStatus{ID: "99aa88bb77cc66dd", Health: hq.HealthUnhealthy, Spec: "sha256:before", EarlierSpec: true}
	b.report(t, "web-1", web, db, result("app", "conf", hq.StateApplied))
	code, body := b.get(t, "/nodes/web-1")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	if n := strings.Count(body, `class="container-row"`); n != 2 {
		t.Fatalf("%d container rows, want 2", n)
	}
	for _, want := range []string{"4f1c2d3e4f5a", "cdcdcdcdcdcd", ">3</td>", "healthy", "unhealthy", "99aa88bb77cc"} {
		if !strings.Contains(body, want) {
			t.Errorf("the node page lacks %q", want)
		}
	}
	if strings.Contains(body, "4f1c2d3e4f5a6b") {
		t.Error("the page shows a container's whole id, not its short one")
	}
	if n := strings.Count(body, "runs an earlier spec than declared"); n != 1 {
		t.Errorf("the page says %d time(s) that a container runs an earlier spec, want once (app/db)", n)
	}
}

// A volume a recreate moved is said at the top of the node page for a day, not only in the
// report that carried it.
func TestNodePageKeepsAMovedVolumeForADay(t *testing.T) {
	b := setup(t)
	b.node(t, "web-1")
	img := "localhost/app@sha256:" + strings.Repeat("ab", 32)
	b.module(t, "app", hq.Resource{Name: "web", Kind: hq.KindContainer, Image: img})
	b.assign(t, "web-1", "app")
	web := result("app", "web", hq.StateApplied)
	const moved = "volume /data of app/web now at /srv/b (was /srv/a): nothing was copied"
	web.Note = "app/web recreated (volumes changed); " + moved
	b.report(t, "web-1", web)
	b.report(t, "web-1", result("app", "web", hq.StateFailed))
	code, body := b.get(t, "/nodes/web-1")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	i := strings.Index(body, `id="volume-moves"`)
	if i < 0 || !strings.Contains(body[i:], moved) {
		t.Fatalf("the node page does not keep the moved volume at its top:\n%s", body)
	}
}

func TestVolumeMovesAreKeptForADay(t *testing.T) {
	now := time.Now()
	line := "volume /data of app/web now at /srv/b (was /srv/a): nothing was copied"
	reports := []db.ReportOutcome{
		{ReportView: hq.ReportView{Summary: "applied 1 resource(s); app/web recreated (volumes changed); " + line, At: now.Add(-time.Hour)}},
		{ReportView: hq.ReportView{Summary: "applied 1 resource(s); " + strings.Replace(line, "/srv/b", "/srv/c", 1), At: now.Add(-25 * time.Hour)}},
		{ReportView: hq.ReportView{Summary: "applied 2 resource(s); app/db recreated (image changed)", At: now}},
	}
	got := volumeMoves(reports, now)
	if len(got) != 1 || got[0].Line != line {
		t.Fatalf("volume moves %+v, want the one of an hour ago alone", got)
	}
}

// Consecutive reports of one line at one generation are one row of the history, with their
// count; a report that says something else between them starts a new row.
func TestNodePageCollapsesRepeatedReportLines(t *testing.T) {
	b := setup(t)
	b.node(t, "web-1")
	b.module(t, "app", file("a"))
	b.assign(t, "web-1", "app")
	b.report(t, "web-1", result("app", "a", hq.StateApplied))
	for i := range 3 {
		// Each hold says something else, so each is its own report, of one line.
		r := result("app", "a", hq.StateHeld)
		r.HoldReason = fmt.Sprintf("would overwrite /etc/a, found on this node (%d)", i)
		b.report(t, "web-1", r)
	}
	code, body := b.get(t, "/nodes/web-1")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	i := strings.Index(body, `id="reports"`)
	if i < 0 {
		t.Fatal("no report history on the node page")
	}
	history := body[i : strings.Index(body[i:], "</table>")+i]
	if n := strings.Count(history, `class="report-row"`); n != 2 {
		t.Errorf("%d rows of reports, want 2: the three holds in one, the apply in another:\n%s", n, history)
	}
	if n := strings.Count(history, "×3"); n != 1 || strings.Contains(history, "×1") {
		t.Errorf("the three holds' row does not say ×3 once:\n%s", history)
	}
}

func TestReportRowsCollapseRunsOfOneLine(t *testing.T) {
	now := time.Now()
	rep := func(id, gen, repeats int64, line string) db.ReportOutcome {
		return db.ReportOutcome{ReportView: hq.ReportView{ID: id, Generation: gen, Summary: line, Repeats: repeats,
			At: now.Add(time.Duration(id) * time.Minute), LastAt: now.Add(time.Duration(id) * time.Minute)}}
	}
	// Newest first, as the store lists them.
	reports := []db.ReportOutcome{rep(9, 2, 0, "b"), rep(8, 2, 4, "a"), rep(7, 2, 1, "a"), rep(6, 1, 0, "a"), rep(5, 1, 0, "b"), rep(4, 1, 0, "b")}
	rows := reportRows(reports, 20, now)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%d-%d %s×%d r%d", r.FirstID, r.ID, r.Summary, r.Rows, r.Repeats))
	}
	want := []string{"9-9 b×1 r0", "7-8 a×2 r5", "6-6 a×1 r0", "4-5 b×2 r0"}
	if !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if rows[1].At != at(reports[2].At, now) || rows[1].LastAt != at(reports[1].LastAt, now) {
		t.Errorf("a run's row spans %v to %v, want from its oldest report's first to its newest's last", rows[1].At, rows[1].LastAt)
	}
	if rows := reportRows(reports, 2, now); len(rows) != 2 {
		t.Errorf("limit 2: %d rows", len(rows))
	}
}
