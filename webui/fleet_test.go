package webui

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
	"github.com/meshhq/hq/internal/wait"
)

// The store the controller runs is what the pages read.
var _ Store = (*db.Store)(nil)

// fleet is a small fleet with something on every page: web-1, web-2 and web-3 (role=web)
// have app from placement web, whose rollout policy sends a new revision to one canary first
// and pauses on its first failure; app r2 failed on the canary, so rollout 1 is paused. db-1
// has proxy from an operator, not taken, with both its files held.
func fleet(t *testing.T) (*bundle, string) {
	t.Helper()
	b := setup(t)
	ctx := context.Background()
	b.module(t, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "v1\nsame\nend\n", Mode: "0644"})
	for _, n := range []string{"web-1", "web-2", "web-3"} {
		if _, _, err := b.store.CreateLabelledNode(ctx, n, map[string]string{"role": "web", "region": "eu"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.store.SetVars(ctx, "web-1", map[string]string{"port": "8080"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.PutPlacement(ctx, hq.Placement{Name: "web", Module: "app", Selector: "role=web",
		Rollout: &hq.RolloutPolicy{Canary: 1, ProgressDeadline: "1h"}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"web-1", "web-2", "web-3"} {
		b.report(t, n, result("app", "conf", hq.StateApplied))
	}
	b.node(t, "db-1")
	b.module(t, "proxy", file("ca"), file("key"))
	b.assign(t, "db-1", "proxy")
	b.report(t, "db-1", result("proxy", "ca", hq.StateHeld), result("proxy", "key", hq.StateHeld))

	b.module(t, "app", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "v2\nsame\nend\n", Mode: "0600"},
		hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "hello\n"})
	var canary string
	wait.For(t, 10*time.Second, "the canary of rollout 1", func() bool {
		ro, err := b.store.GetRollout(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ro.Progress {
			if n.State == hq.RolloutNodeInFlight {
				canary = n.Node
			}
		}
		return canary != ""
	})
	b.report(t, canary, result("app", "conf", hq.StateFailed), result("app", "motd", hq.StateApplied))
	wait.For(t, 10*time.Second, "rollout 1 paused", func() bool {
		ro, err := b.store.GetRollout(ctx, 1)
		return err == nil && ro.State == hq.RolloutPaused
	})
	return b, canary
}

// wantAll fails the test for every part body lacks; body is read as text, entities undone.
func wantAll(t *testing.T, what, body string, parts ...string) {
	t.Helper()
	text := html.UnescapeString(body)
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%s lacks %q", what, p)
		}
	}
}

func wantNone(t *testing.T, what, body string, parts ...string) {
	t.Helper()
	text := html.UnescapeString(body)
	for _, p := range parts {
		if strings.Contains(text, p) {
			t.Errorf("%s shows %q", what, p)
		}
	}
}

func getOK(t *testing.T, b *bundle, path string) string {
	t.Helper()
	code, body := b.get(t, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	if strings.Contains(body, "<script") {
		t.Fatalf("GET %s carries a script tag", path)
	}
	return body
}

func TestRolloutPages(t *testing.T) {
	b, canary := fleet(t)
	// On the mesh a paused rollout is a warning that says why it paused, beside its link.
	wantAll(t, "/", getOK(t, b, "/"), `<li class="rollout-row paused" id="rollout-paused-1"><span class="badge t-warn">paused</span> <a href="/rollouts/1">rollout 1</a>: rollout app r1→r2: 0 of 3 node(s) done, 0 in flight, 1 failed (budget 0): paused: app/conf failed on `+canary,
		`<span class="paused-reason">why: app/conf failed on `+canary)

	list := getOK(t, b, "/rollouts")
	wantAll(t, "/rollouts", list, `<a href="/rollouts/1">1</a>`, `<span class="badge t-bad">paused</span>`,
		`<a href="/placements/web">web</a>`, `<a href="/modules/app/diff?from=1&to=2">r1→r2</a>`)
	wantAll(t, "/rollouts?state=complete", getOK(t, b, "/rollouts?state=complete"), "No rollout matches.")
	wantAll(t, "/rollouts?module=app&state=paused", getOK(t, b, "/rollouts?module=app&state=paused"), `href="/rollouts/1"`)
	for _, bad := range []string{"/rollouts?state=asleep", "/rollouts?after=x", "/rollouts?module=a/b", "/rollouts/0", "/rollouts/x"} {
		if code, _ := b.get(t, bad); code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
			t.Errorf("GET %s: %d, want 400 or 422", bad, code)
		}
	}
	if code, body := b.get(t, "/rollouts/9"); code != http.StatusNotFound || !strings.Contains(body, "no rollout 9") {
		t.Errorf("GET /rollouts/9: %d", code)
	}

	page := getOK(t, b, "/rollouts/1")
	wantAll(t, "/rollouts/1", page,
		`id="paused">paused: app/conf failed on `+canary,
		`action="/rollouts/1/resume"`, `action="/rollouts/1/abort"`, `name="csrf" value="`,
		// policy
		"canary</dt><dd>1 node(s) first, alone", "max_unavailable</dt><dd>1 node(s) in flight at once",
		"failure_budget</dt><dd>0 failed node(s) before the rollout pauses", "progress_deadline</dt><dd>1h for a node to converge",
		// waves: the canary alone, then the two nodes not reached yet
		`<tr class="wave-row"><td>wave 1</td><td class="num">1</td><td><span class="badge t-bad">failed</span> 1`,
		`<tr class="wave-row"><td>waiting</td><td class="num">2</td><td><span class="badge t-neutral">pending</span> 2`,
		// history, from the rollout_transitions the triggers wrote
		`<span class="badge t-neutral">(started)</span></td><td><span class="badge t-wait">progressing</span>`,
		`<span class="badge t-wait">progressing</span></td><td><span class="badge t-bad">paused</span></td><td class="text">app/conf failed on `+canary,
		// the canary's row: its wave, its state in the rollout, from→to, its node status
		`<a href="/nodes/`+canary+`">`+canary+`</a></td><td>wave 1</td><td><span class="badge t-bad">failed</span></td>`,
		`<td class="nowrap">r1→r2</td>`, `<span class="badge t-warn">degraded</span>`)

	// The nodes filter by their state in the rollout, by status and by selector.
	pending := getOK(t, b, "/rollouts/1?state=pending")
	wantNone(t, "/rollouts/1?state=pending", pending, `id="node-`+canary+`"`)
	if n := strings.Count(pending, `class="rollout-node-row"`); n != 2 {
		t.Errorf("/rollouts/1?state=pending lists %d nodes, want 2", n)
	}
	if n := strings.Count(getOK(t, b, "/rollouts/1?status=degraded"), `class="rollout-node-row"`); n != 1 {
		t.Errorf("/rollouts/1?status=degraded lists %d nodes, want 1", n)
	}
	wantAll(t, "/rollouts/1?selector=role=db", getOK(t, b, "/rollouts/1?selector=role%3Ddb"), "No node of this rollout matches.")
	paged := getOK(t, b, "/rollouts/1?state=pending&after=web-0")
	if n := strings.Count(paged, `class="rollout-node-row"`); n != 2 {
		t.Errorf("after web-0: %d nodes", n)
	}
	for _, bad := range []string{"/rollouts/1?status=asleep", "/rollouts/1?selector=role+in+web", "/rollouts/1?state=asleep"} {
		if code, _ := b.get(t, bad); code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
			t.Errorf("GET %s: %d, want 400 or 422", bad, code)
		}
	}
}

func TestPlacementPages(t *testing.T) {
	b, _ := fleet(t)
	list := getOK(t, b, "/placements")
	wantAll(t, "/placements", list, `<a href="/placements/web">web</a>`, `<a href="/modules/app">app</a>`,
		`<a href="/?selector=role%3Dweb">role=web</a>`, `3 node(s)`, "canary 1, max_unavailable 1, failure_budget 0, progress_deadline 1h",
		`<a href="/rollouts/1">1</a> <span class="badge t-bad">paused</span>`)
	wantAll(t, "/placements?after=web", getOK(t, b, "/placements?after=web"), "No placement.")

	page := getOK(t, b, "/placements/web")
	wantAll(t, "/placements/web", page, `id="selector">role=web`, `id="matched">3 node(s) matched, 3 assigned the module by this placement`,
		`href="/rollouts/1"`, `id="node-web-1"`, `id="node-web-2"`, `id="node-web-3"`, `<a href="/placements/web">web</a>`)
	wantNone(t, "/placements/web", page, `id="node-db-1"`)
	// The page's filter narrows what the placement's selector matches.
	narrowed := getOK(t, b, "/placements/web?selector=region%3Dus")
	wantAll(t, "/placements/web?selector=region=us", narrowed, "No node matches.")
	if n := strings.Count(getOK(t, b, "/placements/web?status=converged"), `class="node-row"`); n != 2 {
		t.Errorf("converged nodes of web: %d, want 2", n)
	}
	if code, _ := b.get(t, "/placements/none"); code != http.StatusNotFound {
		t.Errorf("GET /placements/none: %d", code)
	}
}

func TestModulePages(t *testing.T) {
	b, canary := fleet(t)
	list := getOK(t, b, "/modules")
	wantAll(t, "/modules", list, `<a href="/modules/app">app</a>`, `<a href="/modules/app/revisions/2">r2</a>`,
		`<a href="/modules/app/nodes">3 node(s)</a>`, `<a href="/modules/proxy/nodes">1 node(s)</a>`)

	page := getOK(t, b, "/modules/app")
	wantAll(t, "/modules/app", page, `<a href="/modules/app/revisions/2">r2</a>`, `<a href="/placements/web">web</a>`,
		`<a class="diff-link" href="/modules/app/diff?from=1&to=2">changes from r1</a>`, `name="from" type="number" min="1" value="1"`)
	if n := strings.Count(getOK(t, b, "/modules/app?after=2"), `class="revision-row"`); n != 1 {
		t.Errorf("revisions of app before r2: %d, want 1", n)
	}

	nodes := getOK(t, b, "/modules/app/nodes")
	wantAll(t, "/modules/app/nodes", nodes, `id="node-`+canary+`"`, `<td class="num">r2</td>`, `<td class="num">r1</td>`)
	wantNone(t, "/modules/app/nodes", nodes, `id="node-db-1"`)
	if n := strings.Count(getOK(t, b, "/modules/app/nodes?status=converged&selector=region%3Deu"), `class="node-row"`); n != 2 {
		t.Errorf("converged eu nodes of app: %d, want 2", n)
	}

	rev := getOK(t, b, "/modules/app/revisions/1")
	wantAll(t, "/modules/app/revisions/1", rev, `<pre class="content">v1`+"\nsame\nend\n</pre>", `<dt class="mono">path</dt><dd class="mono text">/etc/app.conf</dd>`,
		`<dt class="mono">mode</dt><dd class="mono text">0644</dd>`)

	diff := getOK(t, b, "/modules/app/diff?from=1&to=2")
	wantAll(t, "/modules/app/diff", diff,
		`id="summary">r1→r2: 1 added, 0 removed, 1 changed, 0 unchanged`,
		`<span class="badge t-warn">changed</span> conf`, `<span class="badge t-good">added</span> motd`,
		`<td class="mono">mode</td><td class="mono text">0644</td><td class="mono text">0600</td>`,
		`<span class="hunk">--- r1/conf</span><span class="hunk">+++ r2/conf</span><span class="hunk">@@ -1,3 +1,3 @@</span>`,
		`<span class="del">-v1</span><span class="add">+v2</span><span class="ctx"> same</span>`,
		`<span class="hunk">@@ -0,0 +1 @@</span><span class="add">+hello</span>`)
	// Without from and to: the newest revision against the one before.
	wantAll(t, "/modules/app/diff", getOK(t, b, "/modules/app/diff"), "r1→r2: 1 added")
	wantAll(t, "/modules/app/diff?from=2&to=1", getOK(t, b, "/modules/app/diff?from=2&to=1"), "r2→r1: 0 added, 1 removed, 1 changed")
	wantAll(t, "/modules/app/diff?from=2&to=2", getOK(t, b, "/modules/app/diff?from=2&to=2"), "No resource differs.")
	for path, want := range map[string]int{
		"/modules/app/diff?from=1&to=3": http.StatusNotFound, "/modules/app/diff?from=x": http.StatusBadRequest,
		"/modules/app/diff?to=-1": http.StatusBadRequest, "/modules/app/revisions/0": http.StatusBadRequest,
		"/modules/app/revisions/9": http.StatusNotFound, "/modules/none": http.StatusNotFound, "/modules/none/nodes": http.StatusNotFound,
	} {
		if code, _ := b.get(t, path); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}
}

// A large file's content is not compared line by line, and the page says so.
func TestModuleDiffOfALargeFile(t *testing.T) {
	b := setup(t)
	big := strings.Repeat("a line of a large file\n", 3000)
	b.module(t, "big", hq.Resource{Name: "data", Kind: hq.KindFile, Path: "/etc/data", Content: big})
	b.module(t, "big", hq.Resource{Name: "data", Kind: hq.KindFile, Path: "/etc/data", Content: big + "one more\n"})
	body := getOK(t, b, "/modules/big/diff?from=1&to=2")
	wantAll(t, "/modules/big/diff", body, "content: diff not shown: 67 KiB against 67 KiB, too large to show (texts up to 64 KiB are compared); 1 line(s) differ")
	wantNone(t, "/modules/big/diff", body, "a line of a large file")
	wantAll(t, "/modules/big/revisions/1", getOK(t, b, "/modules/big/revisions/1"), "content: 69000 bytes of content, above 64 KiB: not shown")

	// A revision page shows at most 1 MiB of content, all files together.
	var many []hq.Resource
	chunk := strings.Repeat("60 KiB of text, a line at a time\n", 60<<10/33)
	for i := range 20 {
		many = append(many, hq.Resource{Name: fmt.Sprintf("f%02d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/f%02d", i), Content: chunk})
	}
	b.module(t, "many", many...)
	body = getOK(t, b, "/modules/many/revisions/1")
	if shown := strings.Count(body, `<pre class="content">`); shown != maxRevisionText/len(chunk) {
		t.Errorf("%d files' content shown, want %d", shown, maxRevisionText/len(chunk))
	}
	wantAll(t, "/modules/many/revisions/1", body, fmt.Sprintf("content: %d bytes of content: not shown, as the page shows at most 1024 KiB of content", len(chunk)))
}

func TestNodePageOfAFleet(t *testing.T) {
	b, canary := fleet(t)
	page := getOK(t, b, "/nodes/"+canary)
	wantAll(t, "/nodes/"+canary, page,
		`<a class="mono" href="/?selector=region%3Deu">region=eu</a>, <a class="mono" href="/?selector=role%3Dweb">role=web</a>`,
		`placement <a href="/placements/web">web</a>`, `<a href="/modules/app/revisions/2">2</a>`,
		`<a href="/rollouts/1">rollout 1 of app r1→r2 (paused): this node failed in wave 1: app/conf failed</a>`,
		`action="/nodes/`+canary+`/resources/app/conf/retry"`, `id="strip">`,
		`<span class="cell t-good" title="converged: 2026-11-30T03:00:00.000Z, generation `,
		`<span class="cell t-warn" title="degraded: `)
	wantNone(t, "/nodes/"+canary, page, "/resources/app/motd/retry")
	if canary == "web-1" {
		wantAll(t, "/nodes/web-1", page, `<span class="mono">port=8080</span>`)
	}
	wantAll(t, "/nodes/"+canary, page, `id="hostd-version" class="meta">not said yet`)

	// db-1's hostd says what it runs.
	ctx := context.Background()
	d, err := b.store.Compose(ctx, "db-1", "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Ingest(ctx, "db-1", hq.Report{SendID: d.SendID, Generation: d.Generation, Digest: d.Digest,
		Host:    &hq.HostFacts{HostdVersion: "hostd 1.4.2", OS: "linux", Arch: "amd64", BootedAt: b.clock.Now().Add(-72 * time.Hour)},
		Results: []hq.Result{result("proxy", "ca", hq.StateHeld), result("proxy", "key", hq.StateHeld)}}, db.IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	db1 := getOK(t, b, "/nodes/db-1")
	wantAll(t, "/nodes/db-1", db1, `id="hostd-version" class="mono">hostd 1.4.2`, `<span class="mono">linux/amd64</span>, booted <time`, `>3d ago</time>`,
		"<td class=\"taken\">not taken (2 held)</td>\n<td class=\"assigned\">operator <time", `action="/nodes/db-1/assignments/proxy/take"`,
		`id="vars"><span class="meta">none</span>`, `<span class="cell t-warn" title="waiting-on-take: `)
}

func TestMeshPageFilters(t *testing.T) {
	b, canary := fleet(t)
	// By default the nodes that need a look: the canary (degraded) and db-1 (waiting on take).
	body := getOK(t, b, "/")
	wantAll(t, "/", body, `id="node-`+canary+`"`, `id="node-db-1"`, `<option value="" selected>needs a look</option>`)
	wantNone(t, "/", body, `id="node-web-2"`)
	conv := getOK(t, b, "/?status=converged")
	wantAll(t, "/?status=converged", conv, "Nodes: status converged", `id="node-web-`, `<option value="converged" selected>converged</option>`)
	wantNone(t, "/?status=converged", conv, `id="node-db-1"`, `id="node-`+canary+`"`)
	web := getOK(t, b, "/?selector=role%3Dweb")
	wantAll(t, "/?selector=role=web", web, `id="selected">role=web: 3 node(s): 1 degraded, 2 converged`, `id="node-`+canary+`"`,
		`value="role=web"`, `id="count-degraded"><span class="n">1</span>`, `id="count-waiting-on-take"><span class="n">0</span>`,
		"Nothing is held for an untaken module.")
	wantNone(t, "/?selector=role=web", web, `id="node-db-1"`)
	wantAll(t, "/?status=stuck&selector=role=web", getOK(t, b, "/?status=stuck&selector=role%3Dweb"), "No node matches status stuck, selector role=web.")
	// A bad filter is said beside the form of the mesh page, which renders.
	for _, bad := range []string{"/?status=asleep", "/?selector=role+in+web"} {
		code, body := b.get(t, bad)
		if code != http.StatusBadRequest {
			t.Errorf("GET %s: %d", bad, code)
		}
		wantAll(t, bad, body, `id="filter-error"`, `id="counts"`, "Mend the filter to list nodes.")
	}
}

// The next page of a filtered list keeps the filter.
func TestMeshPagingKeepsTheFilter(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	b.module(t, "app", file("conf"))
	for i := range meshNodes + 5 {
		if _, _, err := b.store.CreateLabelledNode(ctx, fmt.Sprintf("web-%03d", i), map[string]string{"role": "web"}); err != nil {
			t.Fatal(err)
		}
	}
	body := getOK(t, b, "/?status=new&selector=role%3Dweb")
	if n := strings.Count(body, `class="node-row"`); n != meshNodes {
		t.Fatalf("first page: %d nodes", n)
	}
	next := regexp.MustCompile(`id="next-page" href="([^"]+)"`).FindStringSubmatch(body)
	if next == nil {
		t.Fatal("no link to the next page")
	}
	link := html.UnescapeString(next[1])
	u, _ := url.Parse(link)
	if q := u.Query(); q.Get("status") != "new" || q.Get("selector") != "role=web" || q.Get("after") != "new:web-199" {
		t.Fatalf("next page %q", link)
	}
	if n := strings.Count(getOK(t, b, link), `class="node-row"`); n != 5 {
		t.Fatalf("second page: %d nodes", n)
	}
}

// The mesh page draws the last day from the reports: converged below, not converged above.
func TestMeshHistory(t *testing.T) {
	b := setup(t)
	b.module(t, "app", file("conf"))
	for _, n := range []string{"ok-1", "bad-1"} {
		b.node(t, n)
		b.assign(t, n, "app")
	}
	b.report(t, "ok-1", result("app", "conf", hq.StateApplied))
	b.report(t, "bad-1", result("app", "conf", hq.StateFailed))
	b.clock.Advance(5 * time.Hour)
	b.report(t, "ok-1", result("app", "conf", hq.StateApplied))
	b.report(t, "bad-1", result("app", "conf", hq.StateApplied))
	body := getOK(t, b, "/")
	wantAll(t, "/", body, `<svg id="history-chart"`, `id="history-now">last: 2 converged, 0 not converged (of 2 at most in the day; counted once a minute)`,
		"2026-11-30T03:00:00.000Z: 1 converged, 1 not converged", "2026-11-30T07:00:00.000Z: 1 converged, 1 not converged",
		"2026-11-30T08:00:00.000Z: 2 converged, 0 not converged",
		`<rect class="not-converged" x="`, `<rect class="converged" x="`)
	if n := strings.Count(body, `<g class="bar">`); n != historyHours {
		t.Errorf("%d bars, want %d", n, historyHours)
	}
	// The counts are kept for a minute, then counted again.
	b.report(t, "bad-1", result("app", "conf", hq.StateFailed))
	wantAll(t, "/ within the minute", getOK(t, b, "/"), `id="history-now">last: 2 converged, 0 not converged`)
	b.clock.Advance(historyFor)
	wantAll(t, "/ a minute on", getOK(t, b, "/"), `id="history-now">last: 1 converged, 1 not converged`)
	wantAll(t, "/ of an empty mesh", getOK(t, setup(t), "/"), "No node reported in the last 24 hours.")
}

// csrfOf is the token the page at path gives forms, read as a browser with cookie c reads it.
func csrfOf(t *testing.T, b *bundle, c *http.Cookie, path string) string {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.AddCookie(c)
	code, body := b.do(req)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %d, token %v", path, code, m)
	}
	return m[1]
}

// post sends a form as a browser with cookie c would, with the token when it is not empty.
func post(b *bundle, c *http.Cookie, path, tok string, headers ...string) *httptest.ResponseRecorder {
	form := url.Values{}
	if tok != "" {
		form.Set(csrfField, tok)
	}
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if c != nil {
		req.AddCookie(c)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	b.handler.ServeHTTP(w, req)
	return w
}

// Every action is a form posted with the session's token. Without it, with another session's,
// from another site or signed out, it is refused and changes nothing; with it, it acts and
// redirects back, and the page says what was done, once.
func TestActionsWantTheSessionsToken(t *testing.T) {
	b, canary := fleet(t)
	ctx := context.Background()
	session, other := sessionCookie(t, b), sessionCookie(t, b)
	state := func(node, module, resource string) hq.State {
		v, err := b.store.GetNode(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.Resources {
			if r.Module == module && r.Resource == resource {
				return r.State
			}
		}
		t.Fatalf("%s has no %s/%s", node, module, resource)
		return ""
	}
	taken := func() bool {
		t.Helper()
		v, err := b.store.GetNode(ctx, "db-1")
		if err != nil {
			t.Fatal(err)
		}
		return v.Assignments[0].Taken
	}
	rollout := func() hq.RolloutState {
		t.Helper()
		ro, err := b.store.GetRollout(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		return ro.State
	}
	for _, tc := range []struct {
		name, page, action, back, key, flash string
		before, after                        func() bool
	}{
		{"retry", "/nodes/" + canary, "/nodes/" + canary + "/resources/app/conf/retry", "/nodes/" + canary, "retried", "retrying: ",
			func() bool { return state(canary, "app", "conf") == hq.StateFailed }, func() bool { return state(canary, "app", "conf") == hq.StatePending }},
		{"take", "/nodes/db-1", "/nodes/db-1/assignments/proxy/take", "/nodes/db-1", "taken", "taken: ",
			func() bool { return !taken() }, taken},
		{"resume", "/rollouts/1", "/rollouts/1/resume", "/rollouts/1", "resumed", "resumed: ",
			func() bool { return rollout() == hq.RolloutPaused }, func() bool { return rollout() != hq.RolloutPaused }},
		{"abort", "/rollouts/1", "/rollouts/1/abort", "/rollouts/1", "aborted", "aborted: ",
			func() bool { return rollout() == hq.RolloutProgressing || rollout() == hq.RolloutPaused }, func() bool { return rollout() == hq.RolloutAborted }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.before() {
				t.Fatal("not in the state the action starts from")
			}
			tok := csrfOf(t, b, session, tc.page)
			if tok == csrfOf(t, b, other, tc.page) {
				t.Fatal("two sessions have the same token")
			}
			for _, refused := range []struct {
				name    string
				cookie  *http.Cookie
				tok     string
				headers []string
				code    int
			}{
				{"no token", session, "", nil, http.StatusForbidden},
				{"a wrong token", session, tok + "x", nil, http.StatusForbidden},
				{"another session's token", other, tok, nil, http.StatusForbidden},
				{"the token of basic auth", session, b.ui.auth.csrf("credentials"), nil, http.StatusForbidden},
				{"from another site", session, tok, []string{"Origin", "https://evil.example"}, http.StatusForbidden},
				{"signed out", nil, tok, nil, http.StatusUnauthorized},
			} {
				w := post(b, refused.cookie, tc.action, refused.tok, refused.headers...)
				if w.Code != refused.code {
					t.Fatalf("%s: %d, want %d", refused.name, w.Code, refused.code)
				}
				if !tc.before() {
					t.Fatalf("%s changed something", refused.name)
				}
			}
			w := post(b, session, tc.action, tok)
			if w.Code != http.StatusSeeOther || w.Header().Get("Location") != tc.back {
				t.Fatalf("with the token: %d to %q\n%s", w.Code, w.Header().Get("Location"), w.Body)
			}
			if !tc.after() {
				t.Fatal("with the token: nothing changed")
			}
			var flash *http.Cookie
			for _, c := range w.Result().Cookies() {
				if c.Name == flashCookie {
					flash = c
				}
			}
			if flash == nil || flash.Value != tc.key {
				t.Fatalf("flash cookie %v", flash)
			}
			req := httptest.NewRequest("GET", tc.back, nil)
			req.AddCookie(session)
			req.AddCookie(flash)
			rw := httptest.NewRecorder()
			b.handler.ServeHTTP(rw, req)
			wantAll(t, tc.back, rw.Body.String(), `<p class="flash" id="flash" role="status">`+tc.flash)
			cleared := false
			for _, c := range rw.Result().Cookies() {
				cleared = cleared || c.Name == flashCookie && c.MaxAge < 0
			}
			if !cleared {
				t.Fatal("the page did not clear the flash")
			}
		})
	}
	// A flash names a message of the pages' own; anything else shows nothing.
	req := httptest.NewRequest("GET", "/", nil)
	req.AddCookie(session)
	req.AddCookie(&http.Cookie{Name: flashCookie, Value: "<b>hi</b>"})
	if _, body := b.do(req); strings.Contains(body, `id="flash"`) || strings.Contains(body, "hi</b>") {
		t.Fatal("an unknown flash was shown")
	}
	// An action the store refuses answers its reason and changes nothing.
	tok := csrfOf(t, b, session, "/rollouts/1")
	if w := post(b, session, "/rollouts/1/resume", tok); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "rollout 1 is aborted, not paused") {
		t.Fatalf("resume of an aborted rollout: %d %s", w.Code, w.Body)
	}
	if w := post(b, session, "/nodes/web-2/resources/app/conf/retry", tok); w.Code != http.StatusConflict {
		t.Fatalf("retry of an applied resource: %d", w.Code)
	}
}

// Basic auth, which a browser remembers and would send with a form another site posted, gets
// a token of its own, which acts.
func TestActionWithBasicAuth(t *testing.T) {
	b, canary := fleet(t)
	_, body := b.get(t, "/nodes/"+canary)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no token on the page")
	}
	form := url.Values{csrfField: {m[1]}}
	req := httptest.NewRequest("POST", "/nodes/"+canary+"/resources/app/conf/retry", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("op", token)
	if code, _ := b.do(req); code != http.StatusSeeOther {
		t.Fatalf("retry with basic auth and its token: %d", code)
	}
	req = httptest.NewRequest("POST", "/nodes/"+canary+"/resources/app/conf/retry", nil)
	req.SetBasicAuth("op", token)
	if code, _ := b.do(req); code != http.StatusForbidden {
		t.Fatalf("retry with basic auth and no token: %d", code)
	}
}

// The mesh lists the nodes most in need of a look first: one degraded node among 300 new ones
// heads the first page, though its name sorts last.
func TestMeshListsBySeverity(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	for i := range 300 {
		if _, _, err := b.store.CreateLabelledNode(ctx, fmt.Sprintf("a-%03d", i), map[string]string{"role": "db"}); err != nil {
			t.Fatal(err)
		}
	}
	b.module(t, "app", file("conf"))
	b.node(t, "z-degraded")
	b.assign(t, "z-degraded", "app")
	b.report(t, "z-degraded", result("app", "conf", hq.StateFailed))
	body := getOK(t, b, "/")
	rows := regexp.MustCompile(`class="node-row" id="node-([^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(rows) != meshNodes || rows[0][1] != "z-degraded" || rows[1][1] != "a-000" {
		t.Fatalf("first page: %d node(s), first %v", len(rows), rows[:min(2, len(rows))])
	}
	if !strings.Contains(body, `id="next-page" href="/?after=new%3Aa-198"`) {
		t.Error("no link to the next page after a-198")
	}
}

// Filtered by a selector, the mesh counts the nodes it matches; all of them converged, it says
// so and links to them, and status=all lists them.
func TestMeshSelectorAllConverged(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	b.module(t, "app", file("conf"))
	for _, n := range []string{"web-1", "web-2", "db-1"} {
		role := strings.TrimRight(n, "-12")
		if _, _, err := b.store.CreateLabelledNode(ctx, n, map[string]string{"role": role}); err != nil {
			t.Fatal(err)
		}
		b.assign(t, n, "app")
	}
	b.report(t, "web-1", result("app", "conf", hq.StateApplied))
	b.report(t, "web-2", result("app", "conf", hq.StateApplied))
	b.report(t, "db-1", result("app", "conf", hq.StateHeld))
	web := getOK(t, b, "/?selector=role%3Dweb")
	wantAll(t, "/?selector=role=web", web, `id="selected">role=web: 2 node(s), all converged`,
		`id="all-converged">All 2 node(s) matching role=web are converged`, `id="list-all" href="/?selector=role%3Dweb&status=all"`,
		`id="count-converged"><span class="n">2</span>`, "Nothing is held for an untaken module.")
	wantNone(t, "/?selector=role=web", web, "No node matches", `id="node-db-1"`, `class="waiting-row"`)
	all := getOK(t, b, "/?selector=role%3Dweb&status=all")
	wantAll(t, "/?selector=role=web&status=all", all, `id="node-web-1"`, `id="node-web-2"`, `<option value="all" selected>all</option>`)
	wantNone(t, "/?selector=role=web&status=all", all, `id="node-db-1"`)
	wantAll(t, "/?status=all", getOK(t, b, "/?status=all"), `id="node-web-1"`, `id="node-db-1"`)
}

// The node page previews what Take would do to each held file: the file as declared against
// what hostd said it found there (with the hold, else in a drift of the file before), or the
// declared file alone when it never said or left the content out; and only a module that holds
// something offers Take.
func TestNodePagePreviewsTake(t *testing.T) {
	b := setup(t)
	b.node(t, "db-1")
	b.module(t, "proxy", hq.Resource{Name: "ca", Kind: hq.KindFile, Path: "/etc/ca", Content: "line 1\nnew 2\nline 3\n"}, file("key"),
		hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/conf", Content: "listen 443\n"}, file("blob"))
	b.module(t, "quiet", file("motd"))
	b.assign(t, "db-1", "proxy")
	b.assign(t, "db-1", "quiet")
	found := result("proxy", "ca", hq.StateApplied)
	found.Drift, found.DriftDetail, found.DriftFound = true, "content", "line 1\nold 2\nline 3\n"
	b.report(t, "db-1", found, result("proxy", "key", hq.StateApplied), result("proxy", "conf", hq.StateApplied),
		result("proxy", "blob", hq.StateApplied), result("quiet", "motd", hq.StateApplied))
	conf, blob := result("proxy", "conf", hq.StateHeld), result("proxy", "blob", hq.StateHeld)
	conf.HeldFound, blob.HeldFound = &hq.FoundFile{Text: "listen 80\n"}, &hq.FoundFile{Omitted: hq.FoundBinary}
	b.report(t, "db-1", result("proxy", "ca", hq.StateHeld), result("proxy", "key", hq.StateHeld), conf, blob,
		result("quiet", "motd", hq.StateApplied))
	body := getOK(t, b, "/nodes/db-1")
	wantAll(t, "/nodes/db-1", body, `id="hold-proxy/ca"`, "--- proxy/ca as found", "+++ proxy/ca as declared, which Take writes",
		`<span class="del">-old 2</span>`, `<span class="add">+new 2</span>`,
		`id="hold-proxy/key"`, "--- proxy/key (what is there was not reported)", `<span class="add">+x</span>`,
		`id="hold-proxy/conf"`, "--- proxy/conf as found", "+++ proxy/conf as declared, which Take writes",
		`<span class="del">-listen 80</span>`, `<span class="add">+listen 443</span>`,
		`id="hold-proxy/blob"`, "--- proxy/blob (what is there was left out: a binary file)",
		"hostd left out what it found (a binary file)",
		`action="/nodes/db-1/assignments/proxy/take"`)
	wantNone(t, "/nodes/db-1", body, `action="/nodes/db-1/assignments/quiet/take"`, "proxy/conf (what is there was not reported)")
}
