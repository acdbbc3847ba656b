package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// smallDisk mounts a tmpfs of size bytes for the test, or skips outside CI where mounting is
// not allowed (CI runs as root, where it is, so there a failure to mount fails the test).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	os.MkdirAll(dir, 0o755)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("cannot mount a small tmpfs here (needs root): %v %s", err, out)
		}
		t.Fatalf("mount a %s tmpfs: %v %s", size, err, out)
	}
	// Unmount after everything else the test started has stopped (cleanups run last first).
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill leaves about keep bytes free on the filesystem at dir, and returns the filler to remove.
func fill(t *testing.T, dir string, keep int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * st.Bsize
	path := filepath.Join(dir, "filler")
	if free > keep {
		if err := os.WriteFile(path, make([]byte, free-keep), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// reporter is a host speaking only HTTP: it posts reports of its declaration and remembers
// every one the controller acknowledged.
type reporter struct {
	t           *testing.T
	url, token  string
	node        string
	decl        hq.Declaration
	mu          sync.Mutex
	acked       map[int64]int // report id → acknowledgements
	unavailable int
	// cause is what a 503 must say.
	cause string
}

func newReporter(t *testing.T, url, node, token string) *reporter {
	r := &reporter{t: t, url: url, node: node, token: token, acked: map[int64]int{}, cause: "disk is full"}
	req, _ := http.NewRequest("GET", url+"/api/v1/nodes/"+node+"/declaration", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&r.decl); err != nil {
		t.Fatal(err)
	}
	return r
}

// post sends one report, failing every resource with an error of its own (so every report is
// a new row) or applying them, and records the answer.
func (r *reporter) post(failing bool, n int) {
	rep := hq.Report{SendID: r.decl.SendID, Generation: r.decl.Generation, Digest: r.decl.Digest, Signature: r.decl.Signature}
	for _, m := range r.decl.Modules {
		for _, res := range m.Resources {
			out := hq.Result{Module: m.Name, Resource: res.Name, Outcome: hq.StateApplied, Attempted: true, Changed: true}
			if failing {
				out.Outcome, out.Error = hq.StateFailed, fmt.Sprintf("validate: exit status 1 (attempt %d)\n%s", n, strings.Repeat("output ", 200))
			}
			rep.Results = append(rep.Results, out)
		}
	}
	body, _ := json.Marshal(rep)
	req, _ := http.NewRequest("POST", r.url+"/api/v1/nodes/"+r.node+"/reports", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return // the controller may be away; the report is simply not acknowledged
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch resp.StatusCode {
	case http.StatusOK:
		var rr hq.ReportResponse
		if err := json.Unmarshal(b, &rr); err != nil {
			r.t.Errorf("acknowledged report: %v in %s", err, b)
			return
		}
		r.acked[rr.ReportID]++
	case http.StatusServiceUnavailable:
		r.unavailable++
		if resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), r.cause) {
			r.t.Errorf("503 without Retry-After or without its cause: %v %s", resp.Header, b)
		}
	default:
		r.t.Errorf("report answered %d: %s", resp.StatusCode, b)
	}
}

// A full disk refuses writes with 503, Retry-After and the cause, says so on /healthz and in
// /status, loses nothing it acknowledged, and recovers by itself once space returns.
func TestFullDiskIsA503AndRecovers(t *testing.T) {
	sqliteOnly(t, "the full disk is the SQLite file's; PostgreSQL's disk is the server's")
	disk := smallDisk(t, "3m")
	// The simulated host reports every 20 ms, past any host's rate: the node rate is off.
	ctl := startController(t, filepath.Join(disk, "hq.db"), "HQ_NODE_REPORT_RATE=0")
	c := newClient(t, ctl.url)
	c.putModule("base", hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "hello\n"})
	var hosts []*host
	for _, n := range []string{"web-1", "web-2"} {
		h := newHost(t, c, ctl.url, n)
		c.assign(n, "base", false)
		hosts = append(hosts, h)
	}
	c.putModule("sim", hq.Resource{Name: "a", Kind: hq.KindFile, Path: "/etc/a", Content: "a\n"})
	simToken := c.register("sim-1")
	c.assign("sim-1", "sim", false)
	sim := newReporter(t, ctl.url, "sim-1", simToken)
	for _, h := range hosts {
		waitFor(t, 20*time.Second, h.node+" converged", func() bool { return c.node(h.node).Status == hq.StatusConverged })
	}

	// The simulated host reports throughout, rows moving on every report.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			sim.post(i%2 == 0, i)
		}
	})
	defer func() { close(stop); wg.Wait() }()

	filler := fill(t, disk, 256<<10)
	big := strings.Repeat("x", 64<<10)
	var refusal struct {
		status int
		body   string
		retry  string
	}
	for i := 0; i < 200 && refusal.status == 0; i++ {
		body, _ := json.Marshal(map[string][]hq.Resource{"resources": {{Name: "f", Kind: hq.KindFile, Path: "/etc/f", Content: fmt.Sprintf("%d%s", i, big)}}})
		req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/api/v1/modules/filler-%d", ctl.url, i), bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			refusal.status, refusal.body, refusal.retry = resp.StatusCode, string(b), resp.Header.Get("Retry-After")
		} else if resp.StatusCode != http.StatusCreated {
			t.Fatalf("upload %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if refusal.status != http.StatusServiceUnavailable || refusal.retry == "" || !strings.Contains(refusal.body, "disk is full") {
		t.Fatalf("a write to a full disk answered %d (Retry-After %q): %s", refusal.status, refusal.retry, refusal.body)
	}
	waitFor(t, 20*time.Second, "a report to meet the full disk", func() bool {
		sim.mu.Lock()
		defer sim.mu.Unlock()
		return sim.unavailable > 0
	})
	resp, err := http.Get(ctl.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	health, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(health), "cannot write") {
		t.Fatalf("/healthz on a full disk: %d %s", resp.StatusCode, health)
	}
	if lines := strings.Join(c.status().Lines, "\n"); !strings.Contains(lines, "cannot write since") {
		t.Fatalf("/status lines on a full disk: %q", lines)
	}

	// Space returns: writes succeed again by themselves, and the hosts go on converging.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "healthz to recover", func() bool {
		waitFor(t, 20*time.Second, "a report to meet the full disk", func() bool {
			sim.mu.Lock()
			defer sim.mu.Unlock()
			return sim.unavailable > 0
		})
		resp, err := http.Get(ctl.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	c.putModule("base", hq.Resource{Name: "motd", Kind: hq.KindFile, Path: "/etc/motd", Content: "hello again\n"})
	for _, h := range hosts {
		waitFor(t, 20*time.Second, h.node+" to apply after recovery", func() bool {
			return readFile(filepath.Join(h.root, "etc/motd")) == "hello again\n" && c.node(h.node).Status == hq.StatusConverged
		})
	}
	close(stop)
	wg.Wait()
	stop = make(chan struct{}) // for the deferred close

	// Nothing acknowledged was lost: every acknowledged report is a row, counted with its repeats.
	var reps struct{ Reports []hq.ReportView }
	c.call("GET", "/nodes/sim-1/reports?limit=1000", nil, &reps)
	rows := map[int64]int64{}
	for _, r := range reps.Reports {
		rows[r.ID] = 1 + r.Repeats
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	for id, n := range sim.acked {
		if rows[id] < int64(n) {
			t.Errorf("report %d acknowledged %d time(s), stored %d", id, n, rows[id])
		}
	}
}
