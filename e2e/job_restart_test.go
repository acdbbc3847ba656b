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

// A job still running when hostd is killed is not run again by the next hostd: it waits for
// that run and takes its exit for the result. One that ended while no hostd ran is decided by
// its exit code. The job appends a line to a file in its volume each time it starts.
func TestJobInterruptedByAHostdRestartRunsOnce(t *testing.T) {
	env := podmantest.New(t)
	cli, argv := env.ArgvLog()
	vars := append(env.Vars, "HOSTD_CONTAINER_CLI="+cli)
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	token, dir := c.register("web-1"), t.TempDir()
	root, state := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	data := filepath.Join(root, "srv", "job")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		b, _ := os.ReadFile(filepath.Join(data, "runs"))
		return strings.Count(string(b), "\n")
	}
	// job appends a line, then waits for the test to let it end, with the code in the file.
	job := func(gate string) hq.Resource {
		return hq.Resource{Name: "migrate", Kind: hq.KindJob, Image: env.Image, Volumes: []string{"/srv/job:/data"},
			Command: []string{"sh", "-c", "echo ran >> /data/runs; while [ ! -e /data/" + gate + " ]; do sleep 0.1; done; exit $(cat /data/" + gate + ")"}}
	}
	release := func(gate, code string) {
		if err := os.WriteFile(filepath.Join(data, gate), []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := startHost(t, ctl.url, "web-1", token, root, state, vars...)
	c.putModule("app", job("go1"))
	gen := c.assign("web-1", "app", true)
	waitFor(t, 60*time.Second, "the job to start", func() bool { return runs() == 1 })

	h.kill()
	if _, st := ctrState(t, env, "hq-app-migrate"); st != "running" {
		t.Fatalf("after kill -9 of hostd the job is %q, want running", st)
	}
	h = startHost(t, ctl.url, "web-1", token, root, state, vars...)
	waitFor(t, 30*time.Second, "the new hostd to wait for the job", func() bool {
		b, _ := os.ReadFile(argv)
		return strings.Contains(string(b), "wait hq-app-migrate\n")
	})
	release("go1", "0")
	convergedAt(t, c, "web-1", gen, "web-1 converged on the job's first run")
	if n := runs(); n != 1 {
		t.Fatalf("the job started %d times", n)
	}
	if id, _ := ctrState(t, env, "hq-app-migrate"); id != "" {
		t.Fatal("the job's container was left behind")
	}

	// A new spec runs again; this run ends, failing, while no hostd runs.
	c.putModule("app", job("go2"))
	waitFor(t, 60*time.Second, "the new job to start", func() bool { return runs() == 2 })
	h.kill()
	release("go2", "3")
	waitFor(t, 30*time.Second, "the job to exit", func() bool {
		_, st := ctrState(t, env, "hq-app-migrate")
		return st == "exited"
	})
	h = startHost(t, ctl.url, "web-1", token, root, state, vars...)
	waitFor(t, 60*time.Second, "the new hostd to read the job's exit", func() bool {
		return strings.Contains(h.out.String(), "a job an earlier hostd started has ended") &&
			strings.Contains(h.out.String(), "exit_code=3")
	})
	waitFor(t, 30*time.Second, "the job failed", func() bool {
		return resourceOf(c.node("web-1"), "app", "migrate").State == hq.StateFailed
	})
}
