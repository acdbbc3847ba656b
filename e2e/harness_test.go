// Package e2e runs the real hq and hostd binaries as processes, on temporary roots and
// loopback ports, against a real database: a SQLite file, or with HQ_TEST_ENGINE=postgres a
// PostgreSQL server (see internal/testdb).
package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bin holds the binaries built once for the whole run.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hq-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	if err := setUpSuiteTLS(dir); err != nil {
		fmt.Fprintln(os.Stderr, "making the suite's CA:", err)
		os.Exit(1)
	}
	for _, pkg := range []string{"./cmd/hq", "./cmd/hostd", "./e2e/testdata/pairserver", "./e2e/testdata/oidcprovider"} {
		// hostd_failpoints lets a test pause hostd mid-group through its environment
		// (hostd/failpoint_env.go); a build without the tag has no such switch.
		// -buildvcs=auto stamps the commit into the binaries from a checkout, as a build for
		// the mesh would be, even where GOFLAGS turns stamping off.
		cmd := exec.Command("go", "build", "-buildvcs=auto", "-tags", "hostd_failpoints", "-o", dir+"/", pkg)
		cmd.Dir = ".."
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", pkg, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// touchSources stats every source file of the module. go test caches a result by the files a
// test opens or stats; the binaries TestMain builds read the module's sources in another
// process, which the cache cannot see, so without this a change to hostd would replay a stale
// pass. It runs from the first process a test starts: the cache records nothing before m.Run.
var touchSourcesOnce sync.Once

func touchSources(root string) {
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch filepath.Ext(path) {
		case ".go", ".sql", ".html", ".css", ".mod", ".sum":
			os.Stat(path)
		}
		return nil
	})
}

// syncBuffer collects a process's output for assertions while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is one running binary.
type proc struct {
	t    testing.TB
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

func start(t testing.TB, name string, env []string, args ...string) *proc {
	t.Helper()
	touchSourcesOnce.Do(func() { touchSources("..") })
	cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("--- output of %s:\n%s", name, out.String())
		}
	})
	return p
}

// stop ends the process with SIGTERM, then SIGKILL if it does not stop.
func (p *proc) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// kill ends the process at once, as a crash would.
func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

var addrRE = regexp.MustCompile(`"hq serving" addr=(\S+)`)

// controller is a running hq serve.
type controller struct {
	*proc
	// url is https://addr, or http://addr for a plain one.
	url, addr string
	db        string
}

// startController starts hq serve on a free port, over HTTPS only with the suite's
// certificate. env may override that, e.g. with an HQ_TLS_CERT of the test's own.
func startController(t testing.TB, db string, env ...string) *controller {
	return startControllerAt(t, db, "127.0.0.1:0", env...)
}

func startControllerAt(t testing.TB, db, addr string, env ...string) *controller {
	t.Helper()
	return launchController(t, db, addr, append([]string{"HQ_TLS_CERT=" + suite.cert, "HQ_TLS_KEY=" + suite.key}, env...))
}

// startPlainController starts hq serve speaking plain HTTP: only for a test of plain HTTP
// itself, or one whose figures were measured over it.
func startPlainController(t testing.TB, db string, env ...string) *controller {
	t.Helper()
	return launchController(t, db, "127.0.0.1:0", env)
}

func launchController(t testing.TB, db, addr string, env []string) *controller {
	t.Helper()
	env = append(append([]string{"HQ_ADDR=" + addr, "HQ_ADMIN_TOKEN=" + adminToken}, dbEnv(t, db)...), env...)
	p := start(t, "hq", env, "hq", "serve")
	var bound string
	waitFor(t, 20*time.Second, "controller to listen", func() bool {
		if m := addrRE.FindStringSubmatch(p.out.String()); m != nil {
			bound = m[1]
			return true
		}
		return false
	})
	scheme := "http://"
	if envValue(env, "HQ_TLS_CERT") != "" {
		scheme = "https://"
	}
	return &controller{proc: p, url: scheme + bound, addr: bound, db: db}
}

// envValue is what a process started with env sees for key: its last setting wins.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// host is a running hostd with its own root and state directory.
type host struct {
	*proc
	node, root, state string
}

// startHost starts hostd for node against the controller at ctl (or the controllers, comma-
// separated, as HOSTD_CONTROLLER takes them). Over HTTPS it trusts the
// suite's CA (HOSTD_CA), and it is given the key the controller publishes unless env names
// one; env may override either.
func startHost(t testing.TB, ctl string, node, token, root, state string, env ...string) *host {
	t.Helper()
	base := []string{"HOSTD_CONTROLLER=" + ctl, "HOSTD_NODE=" + node, "HOSTD_TOKEN=" + token,
		"HOSTD_ROOT=" + root, "HOSTD_STATE_DIR=" + state, "HOSTD_INTERVAL=1s", "HOSTD_WAIT=5s", "HOSTD_STOP_SERVICES_ON_EXIT=1"}
	if strings.HasPrefix(ctl, "https://") {
		base = append(base, "HOSTD_CA="+suite.ca.file)
	}
	if envValue(env, "HOSTD_CONTROLLER_KEY") == "" {
		first, _, _ := strings.Cut(ctl, ",")
		base = append(base, "HOSTD_CONTROLLER_KEY="+controllerKey(t, first))
	}
	return &host{proc: start(t, "hostd "+node, append(base, env...), "hostd", "run"), node: node, root: root, state: state}
}

// newHost registers a node and starts its hostd on fresh directories.
func newHost(t testing.TB, c *client, ctl, node string, env ...string) *host {
	t.Helper()
	token := c.register(node)
	dir := t.TempDir()
	root, state := filepath.Join(dir, "root"), filepath.Join(dir, "state")
	os.MkdirAll(root, 0o755)
	return startHost(t, ctl, node, token, root, state, env...)
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// freePort returns a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
