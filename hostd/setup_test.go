package hostd

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

// bed is one engine on its own temporary root and state dir.
type bed struct {
	t     *testing.T
	root  string
	state string
	eng   *Engine
	// now is the engine's clock. Unless manual is set, every reconcile moves it an hour on, so
	// back-off never skips an attempt a test did not ask it to.
	now    time.Time
	manual bool
	gen    int64
}

const testInterval = time.Minute

func setup(t *testing.T) *bed {
	t.Helper()
	b := &bed{t: t, root: t.TempDir(), state: t.TempDir(), now: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	b.open()
	// Services outlive an engine (see supervisor); a test's end stops them.
	t.Cleanup(func() { b.eng.sup.stopAll(); b.eng.Close() })
	return b
}

func (b *bed) open() {
	b.t.Helper()
	eng, err := NewEngine(EngineConfig{
		Root: b.root, StateDir: b.state, Interval: testInterval, Node: "web-1",
		Logger:         slog.New(slog.NewTextHandler(testWriter{b.t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:            func() time.Time { return b.now },
		CommandTimeout: 10 * time.Second,
		HealthTimeout:  time.Second,
		StopTimeout:    2 * time.Second,
		StartGrace:     50 * time.Millisecond,
		// A podman of the test's own (podmantest.Env.Setenv) names its networks apart.
		ContainerNetworkPrefix: os.Getenv("HOSTD_CONTAINER_NETWORK_PREFIX"),
	})
	if err != nil {
		b.t.Fatal(err)
	}
	b.eng = eng
}

// restart replaces the engine with a new one on the same state dir, as a restarted hostd: the
// services it runs keep running, for the new one to re-adopt.
func (b *bed) restart() {
	b.t.Helper()
	b.eng.Close()
	b.open()
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// decl composes the next generation's declaration of mods.
func (b *bed) decl(mods ...hq.DeclaredModule) *hq.Declaration {
	b.gen++
	d := &hq.Declaration{Node: "web-1", Generation: b.gen, Modules: mods, SendID: b.gen, ComposedBy: "test"}
	d.Digest = d.ComputeDigest()
	return d
}

func mod(name string, taken bool, rs ...hq.Resource) hq.DeclaredModule {
	return hq.DeclaredModule{Name: name, Revision: 1, Taken: taken, Resources: rs}
}

// results maps a reconcile's results by ref, and checks there is one per declared resource.
type results map[string]hq.Result

func (b *bed) reconcile(d *hq.Declaration) results {
	b.t.Helper()
	if err := b.eng.Admit(d); err != nil {
		b.t.Fatalf("admit: %v", err)
	}
	if !b.manual {
		b.now = b.now.Add(time.Hour)
	}
	rs := b.eng.Reconcile(context.Background(), d)
	if len(rs) != d.ResourceCount() {
		b.t.Fatalf("%d results for %d resources", len(rs), d.ResourceCount())
	}
	m := results{}
	i := 0
	for _, dm := range d.Modules {
		for _, r := range dm.Resources {
			if rs[i].Module != dm.Name || rs[i].Resource != r.Name {
				b.t.Fatalf("result %d is %s/%s, want %s/%s (declaration order)", i, rs[i].Module, rs[i].Resource, dm.Name, r.Name)
			}
			if !rs[i].Outcome.Outcome() {
				b.t.Fatalf("result %d has outcome %q, not one a host reports", i, rs[i].Outcome)
			}
			m[hq.Ref(dm.Name, r.Name)] = rs[i]
			i++
		}
	}
	return m
}

// want checks the parts of ref's result that matter to a test.
func (rs results) want(t *testing.T, ref string, outcome hq.State, attempted, changed bool) hq.Result {
	t.Helper()
	r, ok := rs[ref]
	if !ok {
		t.Fatalf("no result for %s", ref)
	}
	if r.Outcome != outcome || r.Attempted != attempted || r.Changed != changed {
		t.Fatalf("%s: outcome %s attempted %v changed %v (error %q, hold %q, blocked by %q); want %s %v %v",
			ref, r.Outcome, r.Attempted, r.Changed, r.Error, r.HoldReason, r.BlockedBy, outcome, attempted, changed)
	}
	return r
}

func (b *bed) path(p string) string { return filepath.Join(b.root, p) }

func (b *bed) write(p, content string, mode fs.FileMode) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Dir(b.path(p)), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(b.path(p), []byte(content), mode); err != nil {
		b.t.Fatal(err)
	}
	if err := os.Chmod(b.path(p), mode); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bed) read(p string) string {
	b.t.Helper()
	c, err := os.ReadFile(b.path(p))
	if err != nil {
		b.t.Fatal(err)
	}
	return string(c)
}

func (b *bed) exists(p string) bool {
	_, err := os.Lstat(b.path(p))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		b.t.Fatal(err)
	}
	return err == nil
}

func (b *bed) mode(p string) fs.FileMode {
	b.t.Helper()
	fi, err := os.Lstat(b.path(p))
	if err != nil {
		b.t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// noLitter fails if a temp or undo file was left in dir.
func (b *bed) noLitter(dir string) {
	b.t.Helper()
	es, err := os.ReadDir(b.path(dir))
	if err != nil {
		b.t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".hostd-") {
			b.t.Fatalf("left behind %s in %s", e.Name(), dir)
		}
	}
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func file(name, path, content string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindFile, Path: path, Content: content}
}

func ptr[T any](v T) *T { return &v }
