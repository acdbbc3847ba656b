package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
	"github.com/meshhq/hq/internal/testdb"
)

// stackModule is a group of two containers, db and app, each serving on its port, whose
// version shows in their environment: a new version recreates both.
func stackModule(image string, dbPort, appPort, version int) []hq.Resource {
	v := func(r *hq.Resource) {
		r.Group = "pair"
		r.Env = map[string]string{"V": fmt.Sprint(version)}
	}
	return []hq.Resource{podmantest.Web("db", image, dbPort, v), podmantest.Web("app", image, appPort, v)}
}

// stackOnNode is what runs under the pair's names: "V=n" for each running member, "" for a
// member that is missing or not running.
func stackOnNode(t *testing.T, env *podmantest.Env) (db, app string) {
	t.Helper()
	of := func(name string) string {
		if strings.TrimSpace(env.Podman("ps", "-a", "--filter", "name=^"+name+"$", "--format", "{{.ID}}")) == "" {
			return ""
		}
		var cs []struct {
			State  struct{ Status string }
			Config struct{ Env []string }
		}
		if err := json.Unmarshal([]byte(env.Podman("inspect", "--format", "json", name)), &cs); err != nil || len(cs) == 0 {
			t.Fatalf("inspecting %s: %v", name, err)
		}
		if cs[0].State.Status != "running" {
			return ""
		}
		for _, e := range cs[0].Config.Env {
			if strings.HasPrefix(e, "V=") {
				return e
			}
		}
		return "no V"
	}
	return of("hq-stack-db"), of("hq-stack-app")
}

// hostdAlone skips a long test of hostd's own behaviour in the suite's passes that change only
// the controller (its engine, or its long-poll and report paths): the first pass runs it.
func hostdAlone(t *testing.T) {
	t.Helper()
	if os.Getenv("HQ_TEST_ENGINE") == "postgres" || os.Getenv("HQ_LONGPOLL") == "handler" {
		t.Skip("hostd's alone, and long: the pass on SQLite and the standard controller runs it")
	}
}

// stackBed is a controller and a node n1 with a podman of its own, whose hostd a test starts
// and kills again and again on the same root and state.
type stackBed struct {
	t           *testing.T
	env         *podmantest.Env
	c           *client
	url, token  string
	root, state string
}

func newStackBed(t *testing.T) *stackBed {
	t.Helper()
	env := podmantest.New(t)
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	dir := t.TempDir()
	b := &stackBed{t: t, env: env, c: c, url: ctl.url, token: c.register("n1"),
		root: filepath.Join(dir, "root"), state: filepath.Join(dir, "state")}
	os.MkdirAll(b.root, 0o755)
	return b
}

// start starts n1's hostd with env.
func (b *stackBed) start(env ...string) *host {
	b.t.Helper()
	return startHost(b.t, b.url, "n1", b.token, b.root, b.state, env...)
}

// checkWhole fails the test when the pair is not one version, running.
func checkWhole(t *testing.T, env *podmantest.Env, when string, versions ...int) {
	t.Helper()
	db, app := stackOnNode(t, env)
	for _, v := range versions {
		if want := fmt.Sprintf("V=%d", v); db == want && app == want {
			return
		}
	}
	t.Fatalf("%s: db %q, app %q: a mix, or not running (want both at one of %v)", when, db, app, versions)
}

// A two-container group switch killed at each of its steps: the next start of hostd rolls the
// group back before it does anything else, so the node runs both old members, never a mix;
// the report says which group was rolled back, and the switch then completes.
func TestContainerGroupKilledAtEachStepNeverMixes(t *testing.T) {
	hostdAlone(t)
	b := newStackBed(t)
	env, c := b.env, b.c
	dbPort, appPort := freePort(t), freePort(t)
	pause := func(at string) []string {
		return append(slices.Clone(env.Vars), "HOSTD_FAILPOINT_AT="+at, "HOSTD_FAILPOINT_GROUP_COMMIT_PAUSE=2m")
	}

	h := b.start(env.Vars...)
	c.putModule("stack", stackModule(env.Image, dbPort, appPort, 1)...)
	gen := c.assign("n1", "stack", true)
	convergedAt(t, c, "n1", gen, "the pair at version 1")
	h.stop()

	version := 1
	for _, step := range []string{"group-journaled", "container-stopped", "container-aside", "container-renamed",
		"container-started", "group-between-commits"} {
		h = b.start(pause(step)...)
		c.putModule("stack", stackModule(env.Image, dbPort, appPort, version+1)...)
		waitFor(t, 60*time.Second, "hostd paused at "+step, func() bool { return strings.Contains(h.out.String(), "failpoint: paused") })
		h.kill()

		// The next start rolls back before its first reconcile, which pauses before it touches
		// anything: what runs then is what the rollback left.
		h = b.start(pause("group-journaled")...)
		waitFor(t, 60*time.Second, "the restarted hostd paused", func() bool {
			return strings.Contains(h.out.String(), "failpoint: paused at group-journaled")
		})
		if !strings.Contains(h.out.String(), "rolled back a group interrupted before its last commit") {
			t.Fatalf("killed at %s: the next start did not roll the group back:\n%s", step, h.out.String())
		}
		checkWhole(t, env, "after a kill at "+step, version)
		h.kill()

		before := time.Now()
		h = b.start(env.Vars...)
		version++
		convergedAt(t, c, "n1", c.node("n1").Generation, fmt.Sprintf("the pair at version %d after a kill at %s", version, step))
		checkWhole(t, env, "converged after a kill at "+step, version)
		said := slices.ContainsFunc(c.reports("n1"), func(r hq.ReportView) bool {
			return r.At.After(before.Add(-time.Second)) && strings.Contains(r.Summary, "group stack/pair rolled back after an interrupted switch: stack/db, stack/app")
		})
		if !said {
			t.Fatalf("killed at %s: no report says the group was rolled back: %+v", step, c.reports("n1"))
		}
		if ds := c.drifts("n1"); len(ds) != 0 {
			t.Fatalf("killed at %s: the rollback and the switch after it recorded drift: %+v", step, ds)
		}
		h.stop()
	}
}

// Killed at random moments of repeated switches, hostd never leaves the pair mixed: after each
// kill, the next start's rollback (or a switch that had finished) leaves both members at one
// version, running.
func TestContainerGroupKilledAtRandomNeverMixes(t *testing.T) {
	hostdAlone(t)
	b := newStackBed(t)
	env, c := b.env, b.c
	dbPort, appPort := freePort(t), freePort(t)
	pausedEnv := append(slices.Clone(env.Vars), "HOSTD_FAILPOINT_AT=group-journaled", "HOSTD_FAILPOINT_GROUP_COMMIT_PAUSE=2m")

	h := b.start(env.Vars...)
	c.putModule("stack", stackModule(env.Image, dbPort, appPort, 1)...)
	convergedAt(t, c, "n1", c.assign("n1", "stack", true), "the pair at version 1")
	// A few in the suite, which go test bounds at ten minutes a package; HQ_E2E_KILLS asks for
	// more, as CI does in a step of its own (twenty).
	kills := 3
	if n, err := strconv.Atoi(os.Getenv("HQ_E2E_KILLS")); err == nil && n > 0 {
		kills = n
	}
	for i := range kills {
		version := i + 2
		c.putModule("stack", stackModule(env.Image, dbPort, appPort, version)...)
		time.Sleep(time.Duration(rand.Int64N(int64(2500 * time.Millisecond))))
		h.kill()
		// Started paused before any switch touches a member: what runs then is what the
		// rollback (or a switch that ended before the kill) left.
		h = b.start(pausedEnv...)
		waitFor(t, 60*time.Second, "the restarted hostd paused or converged", func() bool {
			if strings.Contains(h.out.String(), "failpoint: paused at group-journaled") {
				return true
			}
			v := c.node("n1")
			return v.Status == hq.StatusConverged && v.AppliedGeneration == v.Generation
		})
		checkWhole(t, env, fmt.Sprintf("kill %d", i+1), version-1, version)
		h.kill()
		h = b.start(env.Vars...)
		convergedAt(t, c, "n1", c.node("n1").Generation, fmt.Sprintf("the pair at version %d", version))
		checkWhole(t, env, fmt.Sprintf("converged after kill %d", i+1), version)
	}
}
