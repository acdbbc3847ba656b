package e2e

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// The mesh page's triage in a browser: one degraded node heads the first page among 300 new
// ones; filtered by a selector whose nodes are all converged it says so and lists them under
// status=all; a bad selector is said beside the form; and a node's page previews what Take
// would write over each held file, as a diff of what its hostd found there against what is
// declared, offering Take only for the module that holds something.
// The new nodes are registered through the API, without a hostd each.
func TestMeshTriageInABrowser(t *testing.T) {
	skipWithoutChromium(t)
	// Failures never turn stuck here: the degraded node stays degraded for the whole test.
	ctl := startController(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=1000000")
	c := newClient(t, ctl.url)
	c.putModule("base", hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "hello\n"})
	c.putModule("bad", hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/bad.conf", Content: "x\n", Validate: []string{"/bin/false"}})
	c.putModule("proxy", hq.Resource{Name: "ca", Kind: hq.KindFile, Path: "/var/lib/proxy/ca.pem", Content: "declared ca\n"})
	for i := range 300 {
		c.registerLabelled(fmt.Sprintf("a-%03d", i), map[string]string{"role": "spare"})
	}
	labelledHost(t, c, ctl.url, "z-degraded", map[string]string{"role": "db"})
	c.assign("z-degraded", "bad", false)
	for _, n := range []string{"web-1", "web-2"} {
		labelledHost(t, c, ctl.url, n, map[string]string{"role": "web"})
		c.assign(n, "base", false)
	}
	held := labelledHost(t, c, ctl.url, "held-1", map[string]string{"role": "edge"})
	os.MkdirAll(filepath.Join(held.root, "var/lib/proxy"), 0o755)
	os.WriteFile(filepath.Join(held.root, "var/lib/proxy/ca.pem"), []byte("found on the machine\n"), 0o644)
	c.assign("held-1", "proxy", false)
	c.assign("held-1", "base", false) // nothing of it is there: applied, nothing held
	want := map[string]hq.Status{"z-degraded": hq.StatusDegraded, "web-1": hq.StatusConverged,
		"web-2": hq.StatusConverged, "held-1": hq.StatusWaitingOnTake}
	waitFor(t, 40*time.Second, "every host in its status", func() bool {
		for n, s := range want {
			if c.node(n).Status != s {
				return false
			}
		}
		return true
	})

	b := newBrowser(t)
	b.signIn(t, ctl)
	b.waitPage(t, ctl.url+"/", func() error {
		if got := b.text(t, "tr.node-row td"); got != "z-degraded" {
			return fmt.Errorf("the first node listed is %q, want z-degraded", got)
		}
		return nil
	})
	if n := b.count(t, "tr.node-row"); n != 200 {
		t.Errorf("the first page lists %d node(s), want 200", n)
	}

	b.waitPage(t, ctl.url+"/?selector="+url.QueryEscape("role=web"), func() error {
		return expectText(b.text(t, "#nodes"), "role=web: 2 node(s), all converged")
	})
	if err := expectText(b.text(t, "#all-converged"), "All 2 node(s) matching role=web are converged"); err != nil {
		t.Error(err)
	}
	if got := b.text(t, "#count-converged .n"); got != "2" {
		t.Errorf("converged tile of role=web reads %q, want 2", got)
	}
	b.run(t, chromedp.Click(chromedp.CSS("#list-all")))
	b.run(t, chromedp.WaitVisible(chromedp.CSS("#node-web-2")))
	if err := expectText(b.text(t, "#group-converged"), "web-1", "web-2"); err != nil {
		t.Error(err)
	}
	if n := b.count(t, "#node-held-1"); n != 0 {
		t.Error("role=web under status=all lists held-1")
	}

	b.waitPage(t, ctl.url+"/?selector="+url.QueryEscape("role in web"), func() error {
		return expectText(b.text(t, "form.filter"), "selector")
	})
	if got := b.text(t, "form.filter #filter-error"); got == "" {
		t.Error("a bad selector's error is not beside the form")
	}
	if n := b.count(t, "#counts"); n != 1 {
		t.Error("a bad selector's page has no counts")
	}

	b.waitPage(t, ctl.url+"/nodes/held-1", func() error {
		return expectText(b.text(t, "#held + table"), "proxy/ca", "would overwrite /var/lib/proxy/ca.pem",
			"--- proxy/ca as found", "+++ proxy/ca as declared, which Take writes", "-found on the machine", "+declared ca")
	})
	// hostd said what it found in the held file: the preview is a diff, not the declared side alone.
	if got := b.text(t, "#held + table"); strings.Contains(got, "not reported") {
		t.Errorf("the preview of proxy/ca says what was found was not reported: %q", got)
	}
	if n := b.count(t, `form[action="/nodes/held-1/assignments/proxy/take"] button`); n != 1 {
		t.Errorf("proxy, which holds a file, has %d Take button(s)", n)
	}
	if n := b.count(t, `form[action="/nodes/held-1/assignments/base/take"]`); n != 0 {
		t.Error("base, which holds nothing, has a Take button")
	}
}
