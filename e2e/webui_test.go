package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
	"github.com/meshhq/hq/internal/testenv"
)

const chromiumPath = "/usr/bin/chromium"

// The status pages, read in a real browser, over a mesh of real hosts in as many statuses as
// real processes reach: converged (with a refused send), stuck on two nodes (mesh-wide),
// degraded, waiting on take, mid-change on a group, silent and behind, and new.
func TestStatusPagesInABrowser(t *testing.T) {
	skipWithoutChromium(t)
	dbPath := testdb.New(t)
	const silentAfter = "HQ_SILENT_AFTER=4s"
	ctl := startController(t, dbPath, "HQ_STUCK_ATTEMPTS=2", silentAfter)
	// A second controller on the same database that never calls a failure stuck: the hosts
	// reporting to it stay failed, so degraded and a failing group last as long as the test.
	patient := startController(t, dbPath, "HQ_STUCK_ATTEMPTS=1000000", silentAfter)
	c := newClient(t, ctl.url)

	c.putModule("base", hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "hello\n"})
	c.putModule("extra", hq.Resource{Name: "limits", Kind: hq.KindFile, Path: "/etc/limits.conf", Content: "nofile 1024\n"})
	c.putModule("bad", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/bad.conf", Content: "x\n", Validate: []string{"/bin/false"}})
	c.putModule("proxy",
		hq.Resource{Name: "ca", Kind: hq.KindFile, Path: "/var/lib/proxy/ca.pem", Content: "declared ca\n"},
		hq.Resource{Name: "key", Kind: hq.KindFile, Path: "/var/lib/proxy/key.pem", Content: "declared key\n"})
	c.putModule("pair",
		hq.Resource{Name: "a", Kind: hq.KindFile, Path: "/etc/pair/a.conf", Content: "a\n", Group: "ab"},
		hq.Resource{Name: "b", Kind: hq.KindFile, Path: "/etc/pair/b.conf", Content: "b\n", Group: "ab", Validate: []string{"/bin/false"}})
	c.putModule("solo", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/solo.conf", Content: "1\n"})

	// conv-1 converges, then is handed a stale declaration, which it refuses.
	px, pxURL := newProxy(t, ctl.url)
	newHost(t, c, pxURL, "conv-1", "HOSTD_WAIT=1s")
	c.assign("conv-1", "base", false)
	waitFor(t, 20*time.Second, "conv-1 applies generation 1", applied(c, "conv-1", 1))
	c.assign("conv-1", "extra", false)
	waitFor(t, 20*time.Second, "conv-1 applies generation 2", applied(c, "conv-1", 2))
	px.set(px.captured(1), nil)
	waitFor(t, 20*time.Second, "the stale send refused", func() bool {
		return slices.ContainsFunc(c.sends("conv-1"), func(s hq.SendView) bool { return s.Outcome == "refused" })
	})
	px.set(nil, nil)

	for _, n := range []string{"stuck-1", "stuck-2"} {
		newHost(t, c, ctl.url, n)
		c.assign(n, "base", false)
		c.assign(n, "bad", false)
	}
	newHost(t, c, patient.url, "degraded-1")
	c.assign("degraded-1", "bad", false)
	newHost(t, c, patient.url, "mid-1")
	c.assign("mid-1", "pair", false)

	held := newHost(t, c, ctl.url, "held-1")
	os.MkdirAll(filepath.Join(held.root, "var/lib/proxy"), 0o755)
	for _, f := range []string{"ca.pem", "key.pem"} {
		os.WriteFile(filepath.Join(held.root, "var/lib/proxy", f), []byte("found on the machine\n"), 0o644)
	}
	c.assign("held-1", "proxy", false)

	// silent-1 applies, stops, and then its module changes: silent and behind.
	silent := newHost(t, c, ctl.url, "silent-1")
	c.assign("silent-1", "solo", false)
	waitFor(t, 20*time.Second, "silent-1 applies", applied(c, "silent-1", 1))
	silent.stop()
	c.putModule("solo", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/solo.conf", Content: "2\n"})

	c.register("new-1")

	want := map[string]hq.Status{
		"conv-1": hq.StatusConverged, "stuck-1": hq.StatusStuck, "stuck-2": hq.StatusStuck,
		"degraded-1": hq.StatusDegraded, "held-1": hq.StatusWaitingOnTake, "mid-1": hq.StatusMidChange,
		"silent-1": hq.StatusSilent, "new-1": hq.StatusNew,
	}
	waitFor(t, 40*time.Second, "every node in its status", func() bool {
		for n, s := range want {
			if c.node(n).Status != s {
				return false
			}
		}
		return true
	})

	b := newBrowser(t)
	shots := outputDir(t)
	b.signIn(t, ctl)

	// The mesh page. A running host could miss one report under load, so the page is reloaded
	// until it shows the whole picture or the wait runs out.
	counts := map[hq.Status]string{
		hq.StatusConverged: "1", hq.StatusStuck: "2", hq.StatusDegraded: "1", hq.StatusWaitingOnTake: "1",
		hq.StatusMidChange: "1", hq.StatusSilent: "1", hq.StatusNew: "1",
	}
	b.waitPage(t, ctl.url+"/", func() error {
		for s, n := range counts {
			if got := b.text(t, "#count-"+string(s)+" .n"); got != n {
				return fmt.Errorf("count tile of %s reads %q, want %s", s, got, n)
			}
		}
		// Converged nodes are counted, not listed: the page lists the nodes that need a look.
		if got := b.text(t, "#nodes"); !strings.Contains(got, "1 converged and not listed") {
			return fmt.Errorf("nodes heading %q", got)
		}
		for n, s := range want {
			if s == hq.StatusConverged {
				continue
			}
			if got := b.text(t, "#node-"+n+" .badge"); got != string(s) {
				return fmt.Errorf("%s shows %q, want %s", n, got, s)
			}
			if got := b.text(t, "#group-"+string(s)+" tr.group"); !strings.Contains(got, string(s)) {
				return fmt.Errorf("group of %s headed %q", s, got)
			}
		}
		return expectText(b.text(t, "#stuck + table"), "bad/conf", "mesh-wide", "never applied", "stuck-1, stuck-2")
	})
	for sel, parts := range map[string][]string{
		"#waiting + table":       {"held-1", "proxy", "waiting on take: proxy (2 held)"},
		"#mid-change + table":    {"mid-1", "waiting group(s): pair/ab"},
		"#refused + table":       {"conv-1"},
		"#node-held-1":           {"waiting on take: proxy (2 held)", "2 held for untaken modules (proxy: 2)"},
		"#node-silent-1":         {"silent: no report since", "(behind)", "mid-change: generation 2 declared, 1 applied"},
		"#node-new-1":            {"never", "new: never reported"},
		"#node-degraded-1":       {"degraded: 1 failed: bad/conf"},
		"#node-stuck-1 ul.lines": {"stuck: bad/conf (never applied, ", " attempts since "},
	} {
		if err := expectText(b.text(t, sel), parts...); err != nil {
			t.Errorf("%s: %v", sel, err)
		}
	}
	b.screenshot(t, filepath.Join(shots, "mesh.png"))

	// One node: status, lines, resources with state and error, and its history.
	b.waitPage(t, ctl.url+"/nodes/stuck-1", func() error {
		return expectText(b.text(t, "#status"), "stuck")
	})
	for sel, parts := range map[string][]string{
		"#lines":               {"stuck: bad/conf (never applied, ", " attempts since "},
		"#resources + table":   {"bad/conf", "file", "stuck", "never applied", "base/motd", "applied"},
		"#report-line":         {"applied 1 resource(s)"},
		"#assignments + table": {"bad", "base", "not taken"},
		"#reports + table":     {"applied 1 resource(s)"},
		"#sends + table":       {"applied"},
		"#transitions + table": {"bad/conf", "failed", "stuck"},
	} {
		if err := expectText(b.text(t, sel), parts...); err != nil {
			t.Errorf("stuck-1 %s: %v", sel, err)
		}
	}
	b.screenshot(t, filepath.Join(shots, "node-stuck-1.png"))

	b.waitPage(t, ctl.url+"/nodes/held-1", func() error {
		return expectText(b.text(t, "#held + table"),
			"proxy/ca", "would overwrite /var/lib/proxy/ca.pem, found on this node; not applied until proxy is taken")
	})
	if err := expectText(b.text(t, "#lines"), "waiting on take: proxy (2 held)"); err != nil {
		t.Error(err)
	}
	b.screenshot(t, filepath.Join(shots, "node-held-1.png"))

	// A converged node is not listed on the mesh page; its own page says what it said.
	b.waitPage(t, ctl.url+"/nodes/conv-1", func() error {
		return expectText(b.text(t, "#lines"), "refused declaration generation 1 (applied 2) composed by ")
	})
	if err := expectText(b.text(t, "#report-line"), "applied 2 resource(s)"); err != nil {
		t.Error(err)
	}

	b.waitPage(t, ctl.url+"/nodes/mid-1", func() error {
		return expectText(b.text(t, "#lines"), "mid-change: 1 grouped-pending, waiting group(s): pair/ab")
	})
	if err := expectText(b.text(t, "#resources + table"), "pair/a", "grouped-pending", "ab", "pair/b", "failed"); err != nil {
		t.Error(err)
	}
	b.screenshot(t, filepath.Join(shots, "node-mid-1.png"))

	// Signing out with the page's own button ends the session on the server: the cookie the
	// browser held, copied out before, is refused afterwards.
	session := b.cookie(t, "hq_session")
	if code := getWithCookie(t, ctl.url+"/", session); code != http.StatusOK {
		t.Fatalf("GET / with the browser's session cookie: %d", code)
	}
	b.run(t, chromedp.Submit(chromedp.CSS(`form[action="/logout"] button`)))
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#token")))
	if code := getWithCookie(t, ctl.url+"/", session); code != http.StatusUnauthorized {
		t.Fatalf("GET / with the session cookie after signing out: %d, want 401", code)
	}
}

// operatorFleet is what the operator's walk and the screenshots read: four real hosts labelled
// by region, app placed on the three web ones under a rollout policy of one canary and no
// failure allowed, and a revision of app whose file fails validate. Its canary, web-eu-1,
// failed it and the rollout paused there; the host kept trying until the resource was stuck.
// db-us-1 is stuck too, on a module assigned to it alone.
type operatorFleet struct {
	ctl *controller
	c   *client
	// rollout is the paused rollout of app r1→r2.
	rollout hq.Rollout
}

func newOperatorFleet(t *testing.T) *operatorFleet {
	t.Helper()
	ctl := startController(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=2")
	c := newClient(t, ctl.url)
	conf := func(workers string, validate ...string) hq.Resource {
		return hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf",
			Content: "port 8080\nworkers " + workers + "\nlog info\n", Validate: validate}
	}
	c.putModule("app", conf("4"))
	c.putModule("bad", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/bad.conf", Content: "x\n", Validate: []string{"/bin/false"}})
	web := []string{"web-eu-1", "web-eu-2", "web-us-1"}
	for _, n := range web {
		labelledHost(t, c, ctl.url, n, map[string]string{"role": "web", "region": n[4:6]})
	}
	labelledHost(t, c, ctl.url, "db-us-1", map[string]string{"role": "db", "region": "us"})
	c.call("PUT", "/placements/web", map[string]any{"module": "app", "selector": "role=web",
		"rollout": map[string]any{"canary": 1, "failure_budget": 0}}, nil)
	c.assign("db-us-1", "bad", false)
	waitFor(t, 30*time.Second, "app r1 on the web nodes", func() bool {
		return converged(c, web[0]) && converged(c, web[1]) && converged(c, web[2])
	})
	// The canary is the first node by name: web-eu-1.
	c.putModule("app", conf("8", "/bin/false"))
	f := &operatorFleet{ctl: ctl, c: c}
	waitFor(t, 60*time.Second, "the rollout paused on its canary, and web-eu-1 and db-us-1 stuck", func() bool {
		rs := c.rollouts()
		if len(rs) != 1 || rs[0].State != hq.RolloutPaused {
			return false
		}
		f.rollout = rs[0]
		return c.node("web-eu-1").Status == hq.StatusStuck && c.node("db-us-1").Status == hq.StatusStuck
	})
	return f
}

// skipWithoutChromium skips a browser test where chromium is missing, and fails it in CI.
func skipWithoutChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		testenv.Missing(t, "chromium is not installed at %s (apt-get install -y chromium)", chromiumPath)
	}
}

// signIn signs the browser in with the operator token.
func (b *browser) signIn(t *testing.T, ctl *controller) {
	t.Helper()
	b.run(t, chromedp.Navigate(ctl.url+"/login"))
	b.run(t, chromedp.SendKeys(chromedp.CSS("#token"), adminToken))
	b.run(t, chromedp.Submit(chromedp.CSS("#token")))
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#counts")))
}

// An operator's walk through the fleet's pages by their links: from the mesh, filtered to the
// nodes stuck in eu by its count and its filter form, to the node listed, its placement, the
// placement's paused rollout, which the Abort button ends; then what the rollout changed, and
// the Retry button on the other stuck node. The Abort form posted with the session's cookie
// but without its token is refused and changes nothing.
func TestOperatorWalkInABrowser(t *testing.T) {
	skipWithoutChromium(t)
	f := newOperatorFleet(t)
	ctl, c := f.ctl, f.c
	b := newBrowser(t)
	b.signIn(t, ctl)
	follow := func(link, landed string) {
		t.Helper()
		b.run(t, chromedp.Click(chromedp.CSS(link)))
		b.run(t, chromedp.WaitVisible(chromedp.CSS(landed)))
	}
	// A running host could miss one report under load, so the mesh is reloaded until it counts
	// both stuck nodes.
	b.waitPage(t, ctl.url+"/", func() error {
		if got := b.text(t, "#count-stuck .n"); got != "2" {
			return fmt.Errorf("stuck count tile reads %q, want 2", got)
		}
		return expectText(b.text(t, "#rollout-lines"), "app r1→r2", "paused")
	})

	// The stuck count links to the stuck nodes; the filter form narrows them to eu.
	follow("#count-stuck a", "#group-stuck")
	if err := expectText(b.text(t, "#nodes"), "Nodes: status stuck"); err != nil {
		t.Error(err)
	}
	b.run(t, chromedp.SendKeys(chromedp.CSS(`form.filter input[name="selector"]`), "region=eu"))
	b.run(t, chromedp.Submit(chromedp.CSS(`form.filter input[name="selector"]`)))
	filtered := "/?status=stuck&selector=region%3Deu"
	waitFor(t, 10*time.Second, "the filter form to go to "+filtered, func() bool { return strings.HasSuffix(b.location(t), filtered) })
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#node-web-eu-1")))
	// The heading and the counts are of the nodes the selector matches: one of the two eu
	// nodes is stuck.
	if err := expectText(b.text(t, "#nodes"), "region=eu: 2 node(s): 1 stuck, 1 converged", "(listed: status stuck)"); err != nil {
		t.Error(err)
	}
	if err := expectText(b.text(t, "#group-stuck tr.group"), "stuck 1 node(s)"); err != nil {
		t.Error(err)
	}
	if got := b.count(t, "#group-stuck tr.node-row"); got != 1 || b.count(t, "#node-db-us-1") != 0 {
		t.Errorf("the filtered list has %d stuck node(s), db-us-1 %d times: want web-eu-1 alone", got, b.count(t, "#node-db-us-1"))
	}

	// The node listed, its placement, and the placement's rollout.
	follow("#node-web-eu-1 a", "#node-name")
	if err := expectText(b.text(t, "#lines"), "stuck: app/conf ("); err != nil {
		t.Error(err)
	}
	follow(`#assignments + table a[href="/placements/web"]`, "#matched")
	if err := expectText(b.text(t, "#matched"), "3 node(s) matched, 3 assigned"); err != nil {
		t.Error(err)
	}
	follow(fmt.Sprintf(`#rollouts + table a[href="/rollouts/%d"]`, f.rollout.ID), "#waves")
	if err := expectText(b.text(t, "#paused"), "paused: app/conf failed on web-eu-1"); err != nil {
		t.Error(err)
	}

	// The Abort form without its token, with the browser's session: refused, nothing done.
	session := b.cookie(t, "hq_session")
	abort := fmt.Sprintf("%s/rollouts/%d/abort", ctl.url, f.rollout.ID)
	for _, form := range []url.Values{{}, {"csrf": {"not-the-token"}}} {
		code, body := postWithCookie(t, abort, ctl.url, session, form)
		if code != http.StatusForbidden || !strings.Contains(body, "does not carry the token of this session") {
			t.Errorf("POST %s with the session cookie and csrf %q: %d %.200s", abort, form.Get("csrf"), code, body)
		}
	}
	if st := c.rollout(f.rollout.ID).State; st != hq.RolloutPaused || pin(c.node("web-eu-1"), "app") != 2 {
		t.Fatalf("after the refused posts the rollout is %s and web-eu-1 on r%d, want paused and r2", st, pin(c.node("web-eu-1"), "app"))
	}

	b.screenshot(t, filepath.Join(outputDir(t), "rollout-paused.png"))
	follow("#abort", "#flash")
	if err := expectText(b.text(t, "#flash"), "aborted: every node the rollout advanced is pinned back"); err != nil {
		t.Error(err)
	}
	if got := b.text(t, "#state"); got != "aborted" {
		t.Errorf("the rollout page shows %q after Abort, want aborted", got)
	}
	if b.count(t, "#abort") != 0 {
		t.Error("an aborted rollout still offers Abort")
	}
	if st := c.rollout(f.rollout.ID).State; st != hq.RolloutAborted {
		t.Fatalf("after Abort the rollout is %s", st)
	}
	waitFor(t, 30*time.Second, "web-eu-1 pinned back to r1 and converged", func() bool {
		return converged(c, "web-eu-1") && pin(c.node("web-eu-1"), "app") == 1
	})

	// What the rollout would have changed: the line of the file.
	follow(`#facts a[href^="/modules/app/diff"]`, "#summary")
	if err := expectText(b.text(t, "#summary"), "r1→r2: 0 added, 0 removed, 1 changed, 0 unchanged"); err != nil {
		t.Error(err)
	}
	if err := expectText(b.text(t, "pre.diff"), "-workers 4", "+workers 8", " port 8080"); err != nil {
		t.Error(err)
	}
	follow(`p.meta a[href="/modules/app"]`, "#revisions")

	// The other stuck node, from the mesh's stuck resources: Retry starts it over.
	b.run(t, chromedp.Navigate(ctl.url+"/"))
	follow(`#stuck + table a[href="/nodes/db-us-1"]`, "#node-name")
	follow("form.retry button", "#flash")
	if err := expectText(b.text(t, "#flash"), "retrying: the resource is pending again"); err != nil {
		t.Error(err)
	}
	b.screenshot(t, filepath.Join(outputDir(t), "node-retried.png"))
}

// Every page at 1280 px wide and as tall as it is, over the walk's fleet, for a person to look
// at: bench/screenshots.sh OUTDIR runs this with HQ_SCREENSHOTS=OUTDIR.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("HQ_SCREENSHOTS")
	if dir == "" {
		t.Skip("HQ_SCREENSHOTS is not set: the screenshots are for a person to look at and check nothing; bench/screenshots.sh OUTDIR takes them")
	}
	skipWithoutChromium(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := newOperatorFleet(t)
	b := newBrowser(t)
	const width = 1280
	b.run(t, chromedp.EmulateViewport(width, 800))
	shoot := func(name, path, ready string) {
		t.Helper()
		b.run(t, chromedp.Navigate(f.ctl.url+path))
		b.run(t, chromedp.WaitVisible(chromedp.CSS(ready)))
		b.pageShot(t, filepath.Join(dir, name+".png"), width)
	}
	shoot("login", "/login", "#token")
	b.signIn(t, f.ctl)
	id := fmt.Sprint(f.rollout.ID)
	for _, p := range []struct{ name, path, ready string }{
		{"mesh", "/", "#history-chart"},
		{"mesh-filtered", "/?status=stuck&selector=region%3Deu", "#node-web-eu-1"},
		{"node", "/nodes/web-eu-1", "#resources"},
		{"rollouts", "/rollouts", "tr.rollout-row"},
		{"rollout", "/rollouts/" + id, "#waves"},
		{"placements", "/placements", "#placement-web"},
		{"placement", "/placements/web", "#matched"},
		{"modules", "/modules", "#module-app"},
		{"module", "/modules/app", "#revisions"},
		{"module-nodes", "/modules/app/nodes", "#node-web-eu-1"},
		{"revision", "/modules/app/revisions/2", "#resource-conf"},
		{"diff", "/modules/app/diff?from=1&to=2", "pre.diff"},
	} {
		shoot(p.name, p.path, p.ready)
	}
}

// postWithCookie posts form as a script holding the session cookie would, from the
// controller's own origin, and returns the status and body.
func postWithCookie(t *testing.T, target, origin string, c *http.Cookie, form url.Values) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	req.AddCookie(c)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func getWithCookie(t *testing.T, url string, c *http.Cookie) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The pages sit beside the API on the controller's one port and take the operator token as
// curl sends it; the API and /healthz answer as before.
func TestStatusPagesBesideTheAPI(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	newClient(t, ctl.url).register("web-1")
	get := func(path string, auth func(*http.Request)) (int, string, http.Header) {
		req, _ := http.NewRequest("GET", ctl.url+path, nil)
		auth(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	none := func(*http.Request) {}
	basic := func(r *http.Request) { r.SetBasicAuth("x", adminToken) }
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+adminToken) }
	// No basic-auth challenge, which a browser would answer with its own dialog: the sign-in
	// page instead. curl -u sends basic auth unasked, below.
	if code, body, h := get("/", none); code != http.StatusUnauthorized || h.Get("WWW-Authenticate") != "" || !strings.Contains(body, `action="/login"`) {
		t.Fatalf("GET / without a token: %d, WWW-Authenticate %q, want 401 with the sign-in form and no challenge", code, h.Get("WWW-Authenticate"))
	}
	for _, auth := range []func(*http.Request){basic, bearer} {
		if code, body, h := get("/", auth); code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(body, "web-1") {
			t.Fatalf("GET /: %d %s", code, h.Get("Content-Type"))
		}
		if code, body, _ := get("/nodes/web-1", auth); code != http.StatusOK || !strings.Contains(body, "new: never reported") {
			t.Fatalf("GET /nodes/web-1: %d", code)
		}
	}
	if code, body, _ := get("/api/v1/nodes/web-1", bearer); code != http.StatusOK || !strings.HasPrefix(body, "{") {
		t.Fatalf("GET /api/v1/nodes/web-1: %d %.80s", code, body)
	}
	if code, body, _ := get("/healthz", none); code != http.StatusOK || !strings.Contains(body, `"ok"`) {
		t.Fatalf("GET /healthz: %d %.80s", code, body)
	}
}

func applied(c *client, node string, gen int64) func() bool {
	return func() bool {
		v := c.node(node)
		return v.Status == hq.StatusConverged && v.AppliedGeneration == gen
	}
}

// expectText reports the first part that text lacks.
func expectText(text string, parts ...string) error {
	for _, p := range parts {
		if !strings.Contains(text, p) {
			return fmt.Errorf("%q lacks %q", text, p)
		}
	}
	return nil
}

// outputDir is where screenshots go: HQ_TEST_OUTPUT when set, so CI can keep them.
func outputDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HQ_TEST_OUTPUT")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is one headless chromium tab.
type browser struct {
	ctx context.Context
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		// The controller's certificate is the suite's: Chromium accepts that one key, no other.
		chromedp.Flag("ignore-certificate-errors-spki-list", suite.spki),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	return &browser{ctx: ctx}
}

func (b *browser) run(t *testing.T, a chromedp.Action[chromedp.Void]) {
	t.Helper()
	if _, err := chromedp.Run(b.ctx, a); err != nil {
		t.Fatal(err)
	}
}

// text is the visible text of the first element matching a CSS selector; "" when none does.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		return ""
	}
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitPage loads url until check passes or 20 seconds have gone, and fails with what the
// page last lacked.
func (b *browser) waitPage(t *testing.T, url string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b.run(t, chromedp.Navigate(url))
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", url, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// cookie returns the browser's cookie of that name for the current page, HttpOnly ones too.
func (b *browser) cookie(t *testing.T, name string) *http.Cookie {
	t.Helper()
	cookies, err := chromedp.Run(b.ctx, chromedp.Action[[]*network.Cookie](func(ctx context.Context, tg *chromedp.Target) ([]*network.Cookie, error) {
		res, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{})
		return res.Cookies, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		if c.Name == name {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	t.Fatalf("the browser holds no cookie %s", name)
	return nil
}

// count is how many elements match a CSS selector.
func (b *browser) count(t *testing.T, sel string) int {
	t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// location is the URL the tab shows.
func (b *browser) location(t *testing.T) string {
	t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// pageShot saves the whole page, width px wide and as tall as its content, as a PNG.
func (b *browser) pageShot(t *testing.T, path string, width int) {
	t.Helper()
	height, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64]("Math.ceil(document.body.getBoundingClientRect().height)"))
	if err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(b.ctx, chromedp.Action[[]byte](func(ctx context.Context, tg *chromedp.Target) ([]byte, error) {
		beyond := true
		res, err := cdp.Call(ctx, tg, page.CaptureScreenshot, page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormatPng,
			CaptureBeyondViewport: &beyond, Clip: &page.Viewport{Width: float64(width), Height: height, Scale: 1}})
		return res.Data, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

func (b *browser) screenshot(t *testing.T, path string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
