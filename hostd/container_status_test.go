package hostd

import (
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/podmantest"
)

// A container's result says what runs: its id, its image's digest, when it started and its
// health, as podman says them. A reconcile that changes nothing says the same without running
// the CLI, and a restart behind hostd's back is counted, with the new start time.
func TestContainerResultSaysWhatRuns(t *testing.T) {
	b, env := containerBed(t)
	port := podmantest.FreePort(t)
	web := podmantest.Web("web", env.Image, port)
	sleeper := sleepingContainer("sleeper", env.Image, func(r *hq.Resource) { r.Restart = hq.RestartAlways })
	d := b.decl(mod("app", true, web, sleeper))
	rs := b.reconcile(d)
	got := rs.want(t, "app/web", hq.StateApplied, true, true).Container
	if got == nil {
		t.Fatal("no container status on the result of a container that runs")
	}
	inspect := strings.Fields(env.Podman("inspect", "--format", "{{.Id}} {{.State.StartedAt.Unix}}", "hq-app-web"))
	_, digest, _ := strings.Cut(env.Image, "@")
	if got.ID != inspect[0] || got.ImageDigest != digest || strconv.FormatInt(got.StartedAt.Unix(), 10) != inspect[1] ||
		got.Health != hq.HealthHealthy || got.Spec != web.Digest() || got.Restarts != 0 || got.EarlierSpec {
		t.Fatalf("status %+v; podman says id and start %v, image %s, spec %s", got, inspect, digest, web.Digest())
	}
	if s := rs["app/sleeper"].Container; s == nil || s.Health != hq.HealthNone || s.ID == "" {
		t.Fatalf("the sleeper's status %+v, want an id and health none", s)
	}

	before := b.eng.ctrs.cli.calls.Load()
	again := b.reconcile(d)
	if calls := b.eng.ctrs.cli.calls.Load() - before; calls != 0 {
		t.Fatalf("a reconcile that changed nothing ran the container CLI %d times", calls)
	}
	if !reflect.DeepEqual(again["app/web"].Container, got) {
		t.Fatalf("unchanged, the status says %+v, was %+v", again["app/web"].Container, got)
	}

	// Killed, podman's restart policy brings the sleeper back; hostd counts the restart.
	first := rs["app/sleeper"].Container
	pid, err := strconv.Atoi(env.Podman("inspect", "--format", "{{.State.Pid}}", "hq-app-sleeper"))
	if err != nil || pid <= 0 {
		t.Fatalf("the sleeper's process: %d %v", pid, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		f := strings.Fields(env.Podman("inspect", "--format", "{{.State.Status}} {{.State.Pid}}", "hq-app-sleeper"))
		if len(f) == 2 && f[0] == "running" && f[1] != strconv.Itoa(pid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed sleeper did not come back: %v", f)
		}
		time.Sleep(100 * time.Millisecond)
	}
	after := b.reconcile(d)["app/sleeper"]
	s := after.Container
	if after.Outcome != hq.StateFailed || s == nil || s.Restarts != 1 || s.ID != first.ID || s.StartedAt.Before(first.StartedAt) {
		t.Fatalf("after a restart behind hostd's back: %s %q, status %+v (was %+v)", after.Outcome, after.Error, s, first)
	}
}

// An entry written before entries kept what runs is listed once, and says it from then on.
func TestContainerEntryWithoutAnIDIsListedOnce(t *testing.T) {
	b, env := containerBed(t)
	d := b.decl(mod("app", true, sleepingContainer("sleeper", env.Image)))
	b.reconcile(d)
	en := *b.eng.ledger.Resources["app/sleeper"]
	en.ContainerID, en.ImageDigest, en.StartedAt = "", "", 0
	b.eng.ledger.Resources["app/sleeper"] = &en
	before := b.eng.ctrs.cli.calls.Load()
	s := b.reconcile(d)["app/sleeper"].Container
	if calls := b.eng.ctrs.cli.calls.Load() - before; calls == 0 || s == nil || s.ID == "" || s.StartedAt.IsZero() {
		t.Fatalf("an old entry: %d CLI runs, status %+v; want a listing and the status", calls, s)
	}
	before = b.eng.ctrs.cli.calls.Load()
	b.reconcile(d)
	if calls := b.eng.ctrs.cli.calls.Load() - before; calls != 0 {
		t.Fatalf("once listed, a reconcile that changed nothing ran the CLI %d times", calls)
	}
}
