package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// pageForm reads a page with the operator token as basic auth and returns it with the CSRF
// token of its forms.
func pageForm(t *testing.T, ctl *controller, path string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", ctl.url+path, nil)
	req.SetBasicAuth("operator", adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %d, no form token in\n%.400s", path, resp.StatusCode, b)
	}
	return string(b), string(m[1])
}

// pressButton posts a page's form as the browser would, and returns where it is sent next.
func pressButton(t *testing.T, ctl *controller, page, action string, form url.Values) string {
	t.Helper()
	_, token := pageForm(t, ctl, page)
	form.Set("csrf", token)
	req, _ := http.NewRequest("POST", ctl.url+action, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", ctl.url)
	req.SetBasicAuth("operator", adminToken)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST %s: %d\n%.400s", action, resp.StatusCode, b)
	}
	return resp.Header.Get("Location")
}

// watch starts hq rollout watch ID; wait gives its exit status and what it printed.
func watch(t *testing.T, ctl *controller, id int64) func() (int, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "hq"), "rollout", "watch", fmt.Sprint(id), "--every", "200ms")
	cmd.Env = append(os.Environ(), "HQ_URL="+ctl.url, "HQ_ADMIN_TOKEN="+adminToken, "HQ_CA="+suite.ca.file)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return func() (int, string) {
		select {
		case err := <-done:
			return exitStatus(err), out.String()
		case <-time.After(30 * time.Second):
			t.Fatalf("hq rollout watch %d still running:\n%s", id, out.String())
			return 0, ""
		}
	}
}

// An operator steers a rollout on real hosts from the page and the CLI: pause, resume,
// promote, watch it complete; a superseded rollout's successor says where its nodes moved
// from; a rollback of the placement to r1 from the page.
func TestSteerARollout(t *testing.T) {
	ctl := startController(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=2")
	c := newClient(t, ctl.url)
	conf := func(content string, validate ...string) hq.Resource {
		return hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: content, Validate: validate}
	}
	c.putModule("app", conf("1\n"))
	nodes := []string{"web-1", "web-2", "web-3"}
	hosts := map[string]*host{}
	tokens := map[string]string{}
	fast := "HOSTD_INTERVAL=200ms"
	for _, n := range nodes {
		tokens[n] = c.registerLabelled(n, map[string]string{"role": "web"})
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "root"), 0o755)
		hosts[n] = startHost(t, ctl.url, n, tokens[n], filepath.Join(dir, "root"), filepath.Join(dir, "state"), fast)
	}
	c.call("PUT", "/placements/web", map[string]any{"module": "app", "selector": "role=web",
		"rollout": map[string]any{"canary": 1, "max_unavailable": 2, "failure_budget": 0, "progress_deadline": "1m", "auto_revert": true}}, nil)
	everywhere := func(content string) {
		t.Helper()
		waitFor(t, 30*time.Second, "app "+strings.TrimSpace(content)+" everywhere", func() bool {
			for _, n := range nodes {
				if !converged(c, n) || readFile(filepath.Join(hosts[n].root, "etc/app.conf")) != content {
					return false
				}
			}
			return true
		})
	}
	everywhere("1\n")
	cli := func(args ...string) string {
		t.Helper()
		out, err := hqCLI(t, ctl.url, args...)
		if err != nil {
			t.Fatalf("hq %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	// r2 while the canary's hostd is down: the canary stays in flight.
	hosts["web-1"].stop()
	c.putModule("app", conf("2\n"))
	a := c.rollouts()[0]
	id := fmt.Sprint(a.ID)
	waitFor(t, 10*time.Second, "the canary in flight", func() bool { return c.rollout(a.ID).InFlight == 1 })

	// Pause from the page: the API, the page and the CLI say so; watch exits 1.
	if to := pressButton(t, ctl, "/rollouts/"+id, "/rollouts/"+id+"/pause", url.Values{}); to != "/rollouts/"+id {
		t.Fatalf("pause sent the browser to %q", to)
	}
	if r := c.rollout(a.ID); r.State != hq.RolloutPaused || r.Reason != "paused by an operator" {
		t.Fatalf("after pause from the page: %s %q", r.State, r.Reason)
	}
	if page, _ := pageForm(t, ctl, "/rollouts/"+id); !strings.Contains(page, `id="resume"`) || !strings.Contains(page, "paused: paused by an operator") {
		t.Fatalf("the rollout page after pause:\n%s", page)
	}
	if out := cli("rollout", "show", id); !strings.Contains(out, "paused: paused by an operator") {
		t.Fatalf("hq rollout show after pause:\n%s", out)
	}
	if code, out := watch(t, ctl, a.ID)(); code != 1 || !strings.Contains(out, "paused") {
		t.Fatalf("hq rollout watch of a paused rollout: exit %d\n%s", code, out)
	}
	if status, _ := c.raw("POST", "/rollouts/"+id+"/pause", nil); status != http.StatusConflict {
		t.Fatalf("pausing a paused rollout: %d", status)
	}

	// Resume from the CLI, promote: the batch goes while the canary is still in flight.
	if out := cli("rollout", "resume", id); !strings.Contains(out, "progressing: resumed by an operator") {
		t.Fatalf("hq rollout resume:\n%s", out)
	}
	if out := cli("rollout", "promote", id); !strings.Contains(out, "promoted by an operator") {
		t.Fatalf("hq rollout promote:\n%s", out)
	}
	waitFor(t, 10*time.Second, "web-2 pinned to r2 beside the canary", func() bool { return pin(c.node("web-2"), "app") == 2 })
	if r := c.rollout(a.ID); !r.Promoted || r.State != hq.RolloutProgressing {
		t.Fatalf("after promote: %+v", r)
	}
	if page, _ := pageForm(t, ctl, "/rollouts/"+id); !strings.Contains(page, `id="promoted"`) || strings.Contains(page, `id="promote"`) {
		t.Fatalf("the rollout page after promote:\n%s", page)
	}

	// The canary's hostd back: the rollout completes, and watch exits 0.
	wait := watch(t, ctl, a.ID)
	hosts["web-1"] = startHost(t, ctl.url, "web-1", tokens["web-1"], hosts["web-1"].root, hosts["web-1"].state, fast)
	if code, out := wait(); code != 0 || !strings.Contains(out, "r1→r2: 3 of 3 node(s) done") || !strings.Contains(out, "complete") {
		t.Fatalf("hq rollout watch to completion: exit %d\n%s", code, out)
	}
	everywhere("2\n")

	// r3 fails on its canary, which is pinned back; r4 supersedes it and says r2→r4.
	c.putModule("app", conf("3\n", "/bin/false"))
	b := c.rollouts()[0]
	if code, out := watch(t, ctl, b.ID)(); code != 1 || !strings.Contains(out, "paused: app/conf failed on web-1") {
		t.Fatalf("hq rollout watch of a failing rollout: exit %d\n%s", code, out)
	}
	c.putModule("app", conf("4\n"))
	d := c.rollouts()[0]
	if d.FromRevision != 2 || !strings.HasPrefix(d.Line, "rollout app r2→r4: ") {
		t.Fatalf("after a superseded rollout: from %d, %q", d.FromRevision, d.Line)
	}
	if page, _ := pageForm(t, ctl, fmt.Sprintf("/rollouts/%d", d.ID)); !strings.Contains(page, `<span id="revisions">r2→r4</span>`) ||
		!strings.Contains(page, `diff?from=2&amp;to=4" id="diff"`) {
		t.Fatalf("the superseding rollout's page:\n%s", page)
	}
	if out := cli("rollout", "list"); !strings.Contains(out, fmt.Sprintf("%d  rollout app r2→r4: ", d.ID)) {
		t.Fatalf("hq rollout list:\n%s", out)
	}
	if code, out := watch(t, ctl, d.ID)(); code != 0 {
		t.Fatalf("hq rollout watch of r4: exit %d\n%s", code, out)
	}
	everywhere("4\n")

	// A rollback to a revision the module does not have changes nothing.
	if status, body := c.raw("POST", "/placements/web/rollback", map[string]int64{"revision": 9}); status != http.StatusNotFound ||
		!strings.Contains(string(body), "module app has no revision 9") {
		t.Fatalf("rollback to r9: %d %s", status, body)
	}
	if n := len(c.rollouts()); n != 3 {
		t.Fatalf("%d rollouts after a refused rollback, want 3", n)
	}

	// Roll the placement back to r1 from the page: a new rollout r4→r1 under the policy.
	to := pressButton(t, ctl, "/placements/web", "/placements/web/rollback", url.Values{"revision": {"1"}})
	back := c.rollouts()[0]
	if to != fmt.Sprintf("/rollouts/%d", back.ID) || back.ToRevision != 1 || back.RollbackOf != 4 || back.Policy.Canary != 1 {
		t.Fatalf("rollback from the page: sent to %q, %+v", to, back)
	}
	everywhere("1\n")
	waitFor(t, 10*time.Second, "the rollback complete", func() bool { return c.rollout(back.ID).State == hq.RolloutComplete })
	if out := cli("rollout", "show", fmt.Sprint(back.ID)); !strings.Contains(out, "rollout app r4→r1: 3 of 3 node(s) done") {
		t.Fatalf("hq rollout show of the rollback:\n%s", out)
	}
	if page, _ := pageForm(t, ctl, fmt.Sprintf("/rollouts/%d", back.ID)); !strings.Contains(page, `id="rollback"`) {
		t.Fatalf("the rollback's page:\n%s", page)
	}
	if status, _ := c.raw("POST", fmt.Sprintf("/rollouts/%d/promote", back.ID), nil); status != http.StatusConflict {
		t.Fatalf("promoting a complete rollout: %d", status)
	}
}
