package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// restartModule declares three services, each a pair server: "one" with a health check on a
// fixed port, "two" plain, "three" in a group with the file it restarts on.
func restartModule(port int) []hq.Resource {
	server := func(name string) hq.Resource {
		return hq.Resource{Name: name, Kind: hq.KindService, Command: []string{filepath.Join(bin, "pairserver"),
			"-a", "{root}/etc/r/a", "-b", "{root}/etc/r/b", "-addr-file", "{root}/var/r/" + name + ".addr"}}
	}
	one, two, three := server("one"), server("two"), server("three")
	one.Command = append(one.Command, "-addr", fmt.Sprintf("127.0.0.1:%d", port))
	one.Health = &hq.Health{HTTP: fmt.Sprintf("http://127.0.0.1:%d/healthz", port)}
	three.Group, three.RestartOn = "g", []string{"conf"}
	return []hq.Resource{
		{Name: "vardir", Kind: hq.KindDirectory, Path: "/var/r"},
		{Name: "a", Kind: hq.KindFile, Path: "/etc/r/a", Content: "A\n"},
		{Name: "b", Kind: hq.KindFile, Path: "/etc/r/b", Content: "B\n"},
		{Name: "conf", Kind: hq.KindFile, Path: "/etc/r/three.conf", Content: "on\n", Group: "g"},
		one, two, three,
	}
}

// servicePids reads the pids hostd recorded for its services.
func servicePids(t *testing.T, h *host) map[string]int {
	t.Helper()
	var recs map[string]struct{ Pid int }
	if err := json.Unmarshal([]byte(readFile(filepath.Join(h.state, "services.json"))), &recs); err != nil {
		t.Fatalf("services.json: %v", err)
	}
	pids := map[string]int{}
	for ref, r := range recs {
		pids[ref] = r.Pid
	}
	return pids
}

// uptime polls services every few milliseconds and keeps, for each, the longest time between
// two answers.
type uptime struct {
	addrs map[string]string
	mu    sync.Mutex
	last  map[string]time.Time
	gap   map[string]time.Duration
	stop  chan struct{}
	done  chan struct{}
}

func watchUptime(addrs map[string]string) *uptime {
	u := &uptime{addrs: addrs, last: map[string]time.Time{}, gap: map[string]time.Duration{},
		stop: make(chan struct{}), done: make(chan struct{})}
	c := &http.Client{Timeout: 500 * time.Millisecond}
	go func() {
		defer close(u.done)
		for {
			select {
			case <-u.stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for name, addr := range u.addrs {
				resp, err := c.Get("http://" + addr + "/")
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				now := time.Now()
				u.mu.Lock()
				if prev, ok := u.last[name]; ok {
					u.gap[name] = max(u.gap[name], now.Sub(prev))
				}
				u.last[name] = now
				u.mu.Unlock()
			}
		}
	}()
	return u
}

// end stops the watch and fails the test if a service went unanswered for maxGap or more, or
// was not answering at the end.
func (u *uptime) end(t *testing.T, maxGap time.Duration) {
	t.Helper()
	close(u.stop)
	<-u.done
	u.mu.Lock()
	defer u.mu.Unlock()
	for name := range u.addrs {
		if gap := max(u.gap[name], time.Since(u.last[name])); gap >= maxGap || u.last[name].IsZero() {
			t.Errorf("service %s went %s without answering", name, gap)
		} else {
			t.Logf("service %s: longest gap between answers %s", name, gap)
		}
	}
}

// TestServicesSurviveHostdRestarts stops hostd ten times with SIGTERM and kills it ten times
// with SIGKILL, starting it again each time: the services it supervises answer throughout,
// and are the same processes at the end as at the start.
func TestServicesSurviveHostdRestarts(t *testing.T) {
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	token := c.register("n1")
	dir := t.TempDir()
	root, state := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	os.MkdirAll(root, 0o755)
	keep := "HOSTD_STOP_SERVICES_ON_EXIT=0"
	h := startHost(t, ctl.url, "n1", token, root, state, keep)
	c.putModule("app", restartModule(freePort(t))...)
	c.assign("n1", "app", false)
	waitFor(t, 20*time.Second, "n1 converged", func() bool {
		v := c.node("n1")
		return v.Status == hq.StatusConverged && v.AppliedGeneration == v.Generation
	})
	addrs := map[string]string{}
	for _, name := range []string{"one", "two", "three"} {
		waitFor(t, 10*time.Second, name+"'s address", func() bool {
			addrs[name] = readFile(filepath.Join(root, "var/r", name+".addr"))
			return !strings.HasPrefix(addrs[name], "<")
		})
	}
	pids := servicePids(t, h)
	if len(pids) != 3 {
		t.Fatalf("pids %v", pids)
	}
	t.Cleanup(func() {
		// Should a check fail with the services left running, they go with the test.
		for _, pid := range pids {
			if strings.Contains(readFile(fmt.Sprintf("/proc/%d/cmdline", pid)), "pairserver") {
				syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
	u := watchUptime(addrs)

	for i := range 20 {
		if i < 10 {
			h.stop()
		} else {
			h.kill()
		}
		env := keep
		if i == 19 {
			env = "HOSTD_STOP_SERVICES_ON_EXIT=1" // the test's end stops them
		}
		h = startHost(t, ctl.url, "n1", token, root, state, env)
		waitFor(t, 10*time.Second, "a reconcile after restart "+fmt.Sprint(i+1), func() bool {
			return strings.Contains(h.out.String(), `msg="applied 7 resource(s)"`)
		})
		out := h.out.String()
		if n := strings.Count(out, "re-adopted a running service"); n != 3 || strings.Contains(out, "service started") {
			t.Fatalf("restart %d re-adopted %d service(s), started any: %v:\n%s", i+1, n, strings.Contains(out, "service started"), out)
		}
		if got := servicePids(t, h); fmt.Sprint(got) != fmt.Sprint(pids) {
			t.Fatalf("after restart %d the services run as %v, not %v", i+1, got, pids)
		}
	}
	u.end(t, time.Second)
	for ref, pid := range pids {
		if !strings.Contains(readFile(fmt.Sprintf("/proc/%d/cmdline", pid)), "pairserver") {
			t.Errorf("%s's process %d is gone", ref, pid)
		}
	}
	if v := c.node("n1"); v.Status != hq.StatusConverged {
		t.Fatalf("n1 is %s after the restarts: %q", v.Status, v.Lines)
	}
}
