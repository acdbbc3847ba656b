package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
	"github.com/meshhq/hq/internal/testdb"
)

// A new version of a secret is a rollout: `hq secret put` makes a new revision, its canary
// gets the new value first, and when the container's health check fails on it, hostd puts
// the container it replaced back and auto-revert pins the canary to the revision before,
// with the old version; the other node is never sent the new revision.
func TestSecretRotationIsARolloutThatRevertsOnItsCanary(t *testing.T) {
	ctl := startController(t, testdb.New(t), "HQ_STUCK_ATTEMPTS=2") // the first failure fails the canary
	c := newClient(t, ctl.url)
	nodes := []string{"web-1", "web-2"}
	envs := map[string]*podmantest.Env{}
	var image string
	for _, n := range nodes {
		env := podmantest.New(t)
		if image == "" {
			image = env.Registry()
		} else {
			env.UseRegistryOf(envs[nodes[0]])
		}
		envs[n] = env
		labelledHost(t, c, ctl.url, n, map[string]string{"role": "web"}, env.Vars...)
	}
	if out, err := hqCLI(t, ctl.url, "secret", "put", "app/key", "--from-file", valueFile(t, "good")); err != nil {
		t.Fatalf("hq secret put v1: %v\n%s", err, out)
	}
	// Healthy only while the mounted secret says good.
	c.putModule("app", hq.Resource{Name: "web", Kind: hq.KindContainer, Image: image, Command: []string{"sleep", "3600"},
		Secrets: []hq.SecretFile{{Name: "app/key", Target: "/run/secrets/key"}},
		Health:  &hq.Health{Command: []string{"sh", "-c", `test "$(cat /run/secrets/key)" = good`}}})
	c.call("PUT", "/placements/web", map[string]any{"module": "app", "selector": "role=web", "taken": true,
		"rollout": map[string]any{"canary": 1, "max_unavailable": 1, "failure_budget": 0, "progress_deadline": "1m", "auto_revert": true}}, nil)
	waitFor(t, 90*time.Second, "app r1 on both nodes", func() bool {
		return converged(c, "web-1") && converged(c, "web-2") && pin(c.node("web-1"), "app") == 1 && pin(c.node("web-2"), "app") == 1
	})
	ids, sent := map[string]string{}, map[string]int64{}
	for _, n := range nodes {
		ids[n] = envs[n].Podman("inspect", "--format", "{{.Id}}", "hq-app-web")
		sent[n] = lastSent(c, n)
	}

	out, err := hqCLI(t, ctl.url, "secret", "put", "app/key", "--from-file", valueFile(t, "bad"))
	if err != nil || strings.Contains(out, "bad") {
		t.Fatalf("hq secret put v2: %v\n%s", err, out)
	}
	var r hq.Rollout
	waitFor(t, 90*time.Second, "the rollout of r2 to stop at its canary", func() bool {
		rs := c.rollouts()
		if len(rs) == 0 {
			return false
		}
		r = c.rollout(rs[0].ID)
		return r.ToRevision == 2 && r.State == hq.RolloutPaused
	})
	var canary, rest string
	for _, p := range r.Progress {
		switch {
		case p.Wave == 1 && p.State == hq.RolloutNodeReverted:
			canary = p.Node
		case p.Wave == 0 && p.State == hq.RolloutNodePending:
			rest = p.Node
		}
	}
	if canary == "" || rest == "" {
		t.Fatalf("rollout %s: %+v, want the canary reverted and the other pending", r.Line, r.Progress)
	}
	if !strings.Contains(r.Line, "app/web failed on "+canary) {
		t.Fatalf("rollout line %q", r.Line)
	}
	waitFor(t, 60*time.Second, canary+" back on r1 and converged", func() bool {
		return converged(c, canary) && pin(c.node(canary), "app") == 1
	})
	// The canary runs v1 again, in a container of r1's spec; the other node never moved.
	if got := envs[canary].Podman("exec", "hq-app-web", "cat", "/run/secrets/key"); got != "good" {
		t.Fatalf("%s's container holds %q after the revert", canary, got)
	}
	if got := envs[rest].Podman("exec", "hq-app-web", "cat", "/run/secrets/key"); got != "good" {
		t.Fatalf("%s's container holds %q", rest, got)
	}
	if id := envs[rest].Podman("inspect", "--format", "{{.Id}}", "hq-app-web"); id != ids[rest] {
		t.Fatalf("%s's container was replaced: %s, was %s", rest, id, ids[rest])
	}
	if g := lastSent(c, rest); g != sent[rest] || pin(c.node(rest), "app") != 1 {
		t.Fatalf("%s was sent generation %d (had %d), pinned to r%d", rest, g, sent[rest], pin(c.node(rest), "app"))
	}
	// What the v2 container put in the canary's secret store went with it.
	secrets := func(n string) string { return envs[n].Podman("secret", "ls", "--format", "{{.Name}}") }
	if got := secrets(canary); got != "hq-app-web.app_key.v1" {
		t.Fatalf("%s's podman secrets after the revert: %q", canary, got)
	}
	var v hq.SecretView
	c.call("GET", "/secrets/app/key", nil, &v)
	if v.Version != 2 || len(v.Versions) != 2 {
		t.Fatalf("the secret after the rotation: %+v", v)
	}
	// The container removed, so are its secrets.
	c.call("DELETE", "/placements/web", nil, nil)
	waitFor(t, 60*time.Second, "the container and its secrets gone from "+rest, func() bool {
		out, _ := envs[rest].TryPodman("ps", "-a", "--format", "{{.Names}}")
		return converged(c, rest) && out == "" && secrets(rest) == ""
	})
}

// valueFile writes a secret's value to a file of its own, for hq secret put --from-file.
func valueFile(t *testing.T, value string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(p, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
