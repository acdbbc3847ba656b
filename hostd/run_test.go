package hostd

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/keys"
)

// fakeController serves the node API from a queue of declarations and records the reports.
type fakeController struct {
	t      *testing.T
	priv   ed25519.PrivateKey
	pub    ed25519.PublicKey
	queue  chan *hq.Declaration
	stuck  []string
	mu     sync.Mutex
	afters []int64
	posted []hq.Report
	// current, when set, is served as the controller serves its latest declaration: at once
	// when its generation is above the poll's after (or there is no after), else not at all.
	current *hq.Declaration
	// keyAnswers are the statuses GET /controller-key answers before it answers the key;
	// keyFetches counts its calls.
	keyAnswers []int
	keyFetches int
	// busy holds, by call ("poll", "report"), the statuses it answers with Retry-After: 2
	// (longer than hostd's first back-off) before it answers anything else, as an overloaded controller sheds load without reading
	// the body; tries records when each call came.
	busy  map[string][]int
	tries map[string][]time.Time
	// chain is what the controller's own declarations carry to its key; announce makes its
	// report answers carry the key and the chain too, as hq's do.
	chain    []keys.Vouch
	announce bool
}

// shed answers call with the next status busy holds for it, and reports whether it did.
func (f *fakeController) shed(w http.ResponseWriter, call string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries[call] = append(f.tries[call], time.Now())
	if len(f.busy[call]) == 0 {
		return false
	}
	status := f.busy[call][0]
	f.busy[call] = f.busy[call][1:]
	w.Header().Set("Retry-After", "2")
	http.Error(w, `{"error":{"code":"unavailable","message":"overloaded, come back later"}}`, status)
	return true
}

func newFakeController(t *testing.T) (*fakeController, *httptest.Server) {
	f, h := fakeControllerHandler(t)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return f, srv
}

// fakeControllerHandler is the fake controller's node API, to serve over HTTP or HTTPS.
func fakeControllerHandler(t *testing.T) (*fakeController, http.Handler) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeController{t: t, priv: priv, pub: pub, queue: make(chan *hq.Declaration, 10),
		busy: map[string][]int{}, tries: map[string][]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/controller-key", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.keyFetches++
		if len(f.keyAnswers) > 0 {
			status := f.keyAnswers[0]
			f.keyAnswers = f.keyAnswers[1:]
			http.Error(w, `{"error":{"code":"not_found","message":"this controller does not sign declarations"}}`, status)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"key": base64.StdEncoding.EncodeToString(f.pub)})
	})
	mux.HandleFunc("GET /api/v1/nodes/web-1/declaration", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		if f.shed(w, "poll") {
			return
		}
		after, err := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
		if err != nil {
			after = -1
		}
		wait, err := time.ParseDuration(r.URL.Query().Get("wait"))
		if err != nil {
			http.Error(w, "bad wait", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.afters = append(f.afters, after)
		cur := f.current
		f.mu.Unlock()
		if cur != nil && cur.Generation > after {
			json.NewEncoder(w).Encode(cur)
			return
		}
		select {
		case d := <-f.queue:
			json.NewEncoder(w).Encode(d)
		case <-time.After(wait):
			w.WriteHeader(http.StatusNotModified)
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /api/v1/nodes/web-1/reports", func(w http.ResponseWriter, r *http.Request) {
		if f.shed(w, "report") {
			return
		}
		var rep hq.Report
		if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.posted = append(f.posted, rep)
		n := len(f.posted)
		resp := hq.ReportResponse{ReportID: int64(n), Stuck: f.stuck}
		if f.announce {
			resp.Key, resp.KeyChain = base64.StdEncoding.EncodeToString(f.pub), f.chain
		}
		f.mu.Unlock()
		json.NewEncoder(w).Encode(resp)
	})
	return f, mux
}

// config is hostd's configuration against the fake controller at srv, with its key pinned.
func (f *fakeController) config(srv *httptest.Server) Config {
	return Config{Controller: srv.URL, Node: "web-1", Token: "tok", Root: f.t.TempDir(), StateDir: f.t.TempDir(),
		Interval: time.Hour, Wait: 200 * time.Millisecond, ControllerKey: base64.StdEncoding.EncodeToString(f.pub)}
}

// send queues a declaration signed with key (the controller's own when nil).
func (f *fakeController) send(gen int64, key ed25519.PrivateKey, mods ...hq.DeclaredModule) *hq.Declaration {
	d := f.sign(gen, key, mods...)
	f.queue <- d
	return d
}

// publish makes a declaration signed by the controller its latest, served by generation.
func (f *fakeController) publish(gen int64, mods ...hq.DeclaredModule) *hq.Declaration {
	d := f.sign(gen, nil, mods...)
	f.mu.Lock()
	f.current = d
	f.mu.Unlock()
	return d
}

func (f *fakeController) sign(gen int64, key ed25519.PrivateKey, mods ...hq.DeclaredModule) *hq.Declaration {
	d := &hq.Declaration{Node: "web-1", Generation: gen, Modules: mods, SendID: gen * 10, ComposedBy: "ctl-a",
		ComposedAt: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	d.Digest = d.ComputeDigest()
	if key == nil {
		// The controller's own, naming its key and the chain to it; a forger's names nothing.
		f.mu.Lock()
		key, d.KeyChain = f.priv, f.chain
		f.mu.Unlock()
		d.Key = base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	}
	d.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(key, keys.DeclarationStatement(d.Node, d.Generation, d.Digest)))
	return d
}

// waitReport waits for a posted report that satisfies ok.
func (f *fakeController) waitReport(what string, ok func(hq.Report) bool) hq.Report {
	f.t.Helper()
	var found hq.Report
	waitFor(f.t, 10*time.Second, what, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, r := range f.posted {
			if ok(r) {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

// logBuffer is a log sink tests can read while hostd writes to it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// runHostd runs Run in the background; the returned stop cancels it and returns Run's error.
func runHostd(t *testing.T, cfg Config, logs *logBuffer) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, slog.New(slog.NewTextHandler(logs, nil))) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(15 * time.Second):
				err = errors.New("Run did not return")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

func TestRunAppliesReportsAndRefuses(t *testing.T) {
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	cfg.ControllerKey, cfg.LearnKey = "", true
	root, state := cfg.Root, cfg.StateDir
	logs := &logBuffer{}
	stop := runHostd(t, cfg, logs)

	d2 := f.send(2, nil, mod("app", false, file("conf", "/etc/app.conf", "v2"),
		hq.Resource{Name: "bad", Kind: hq.KindFile, Path: "/etc/bad", Content: "x", Validate: []string{"false"}}))
	rep := f.waitReport("the report of generation 2", func(r hq.Report) bool { return r.Generation == 2 })
	if rep.Digest != d2.Digest || len(rep.Results) != 2 || rep.Refused != nil || rep.Results[0].Outcome != hq.StateApplied {
		t.Fatalf("report %+v", rep)
	}
	if rep.SendID != d2.SendID || rep.Signature != d2.Signature || rep.Signature == "" {
		t.Fatalf("the report names send %d signed %q, want send %d signed %q", rep.SendID, rep.Signature, d2.SendID, d2.Signature)
	}
	if c, _ := os.ReadFile(filepath.Join(root, "etc/app.conf")); string(c) != "v2" {
		t.Fatalf("content %q", c)
	}
	if _, err := os.Stat(filepath.Join(state, keyFile)); err != nil {
		t.Fatal("the controller key was not pinned")
	}
	waitFor(t, 5*time.Second, "the report line in the log", func() bool {
		return strings.Contains(logs.String(), `msg="applied 1 resource(s), 1 failed" generation=2`)
	})

	// A replay of an older generation is refused and said so; the machine stays at 2.
	f.mu.Lock()
	f.stuck = []string{"app/bad"}
	f.mu.Unlock()
	d1 := f.send(1, nil, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	rep = f.waitReport("a refusal of generation 1", func(r hq.Report) bool { return r.Refused != nil && r.Refused.Generation == 1 })
	want := hq.Refusal{Generation: 1, Digest: d1.Digest, SendID: 10, ComposedBy: "ctl-a", ComposedAt: d1.ComposedAt,
		Reason: "generation 1 is older than applied generation 2"}
	if *rep.Refused != want || rep.Generation != 2 || rep.SendID != d2.SendID || rep.Signature != d2.Signature {
		t.Fatalf("refusal %+v in a report of generation %d, send %d", rep.Refused, rep.Generation, rep.SendID)
	}
	if c, _ := os.ReadFile(filepath.Join(root, "etc/app.conf")); string(c) != "v2" {
		t.Fatal("a refused declaration was applied")
	}

	// One signed with another key is refused too; its generation is not believed, so hostd
	// keeps asking for what comes after the last generation it could verify.
	_, other, _ := ed25519.GenerateKey(nil)
	f.send(3, other, mod("app", false, file("conf", "/etc/app.conf", "v3")))
	rep = f.waitReport("a refusal of generation 3", func(r hq.Report) bool { return r.Refused != nil && r.Refused.Generation == 3 })
	if !strings.Contains(rep.Refused.Reason, "signature does not verify") {
		t.Fatalf("reason %q", rep.Refused.Reason)
	}
	f.mu.Lock()
	polls := len(f.afters)
	f.mu.Unlock()
	waitFor(t, 5*time.Second, "a poll after generation 2 again", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.afters) > polls && f.afters[len(f.afters)-1] == 2
	})
	if strings.Count(logs.String(), `msg="resource stuck" resource=app/bad`) != 1 {
		t.Fatalf("stuck not logged exactly once:\n%s", logs.String())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestRunKeepsReconcilingWithoutController(t *testing.T) {
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	root := cfg.Root
	stop := runHostd(t, cfg, &logBuffer{})
	f.send(1, nil, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	f.waitReport("the first report", func(r hq.Report) bool { return r.Generation == 1 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// The controller is gone; hostd restarts from the declaration it kept.
	srv.Close()
	conf := filepath.Join(root, "etc/app.conf")
	os.Remove(conf)
	cfg.Interval = 50 * time.Millisecond
	logs := &logBuffer{}
	stop = runHostd(t, cfg, logs)
	waitFor(t, 5*time.Second, "the deleted file to be put back", func() bool {
		c, err := os.ReadFile(conf)
		return err == nil && string(c) == "v1"
	})
	os.Remove(conf)
	waitFor(t, 5*time.Second, "the file to be put back on the next interval", func() bool {
		_, err := os.Stat(conf)
		return err == nil
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "posting report") {
		t.Fatal("failed report posts were not logged")
	}
}

func TestConfigCheck(t *testing.T) {
	ok := Config{Controller: "http://127.0.0.1:8080", Node: "n", Token: "t", Root: "/", StateDir: "/var/lib/hostd", Interval: time.Minute, Wait: time.Second,
		ControllerKey: base64.StdEncoding.EncodeToString(make([]byte, ed25519.PublicKeySize))}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	learn := ok
	learn.ControllerKey, learn.LearnKey = "", true
	if err := learn.Check(); err != nil {
		t.Fatalf("learning the key: %v", err)
	}
	secure := ok
	secure.Controller, secure.CA, secure.Cert, secure.Key = "https://hq:8443", "/etc/hostd/ca.pem", "/etc/hostd/web-1.pem", "/etc/hostd/web-1.key"
	if err := secure.Check(); err != nil {
		t.Fatalf("over HTTPS with a CA and a certificate: %v", err)
	}
	for name, change := range map[string]func(*Config){
		"no controller":          func(c *Config) { c.Controller = "" },
		"bad url":                func(c *Config) { c.Controller = "127.0.0.1:8080" },
		"relative root":          func(c *Config) { c.Root = "root" },
		"zero interval":          func(c *Config) { c.Interval = 0 },
		"bad key":                func(c *Config) { c.ControllerKey = "abc" },
		"no key":                 func(c *Config) { c.ControllerKey = "" },
		"a CA for http":          func(c *Config) { c.CA = "/etc/hostd/ca.pem" },
		"a certificate for http": func(c *Config) { c.Cert, c.Key = "/etc/hostd/web-1.pem", "/etc/hostd/web-1.key" },
	} {
		c := ok
		change(&c)
		if c.Check() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRunReportsARefusalBeforeAnyDeclaration(t *testing.T) {
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	runHostd(t, cfg, &logBuffer{})
	d := &hq.Declaration{Node: "web-1", Generation: 4, Modules: []hq.DeclaredModule{mod("app", false, file("a", "/a", "x"))}, Digest: "sha256:forged"}
	f.queue <- d
	rep := f.waitReport("a refusal", func(r hq.Report) bool { return r.Refused != nil })
	if rep.Generation != 0 || len(rep.Results) != 0 || !strings.Contains(rep.Refused.Reason, "does not match") {
		t.Fatalf("report %+v, refusal %+v", rep, rep.Refused)
	}
	if _, err := os.Stat(filepath.Join(cfg.Root, "a")); err == nil {
		t.Fatal("a forged declaration was applied")
	}
}

// TestRunAsksAgainForTheAppliedGenerationWithoutAKeptDeclaration restarts hostd after its kept
// declaration is lost (deleted, never saved, or no longer verifying): it must ask the controller
// for the generation it applied again, not only for newer ones, or it would never reconcile.
func TestRunAsksAgainForTheAppliedGenerationWithoutAKeptDeclaration(t *testing.T) {
	for name, spoil := range map[string]func(string) error{
		"deleted": os.Remove,
		"damaged": func(name string) error { return os.WriteFile(name, []byte(`{"node":"web-1","generation":1}`), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			f, srv := newFakeController(t)
			cfg := f.config(srv)
			root, state := cfg.Root, cfg.StateDir
			stop := runHostd(t, cfg, &logBuffer{})
			d := f.publish(1, mod("app", false, file("conf", "/etc/app.conf", "v1")))
			f.waitReport("the first report", func(r hq.Report) bool { return r.Generation == 1 })
			if err := stop(); err != nil {
				t.Fatal(err)
			}

			if err := spoil(filepath.Join(state, declarationFile)); err != nil {
				t.Fatal(err)
			}
			conf := filepath.Join(root, "etc/app.conf")
			os.Remove(conf)
			restarted := time.Now().UTC()
			stop = runHostd(t, cfg, &logBuffer{})
			rep := f.waitReport("a report of generation 1 after the restart", func(r hq.Report) bool {
				return r.Generation == 1 && !r.StartedAt.Before(restarted)
			})
			if rep.Refused != nil || rep.Digest != d.Digest {
				t.Fatalf("report %+v, refusal %+v", rep, rep.Refused)
			}
			if c, err := os.ReadFile(conf); err != nil || string(c) != "v1" {
				t.Fatalf("the deleted file was not put back: %q, %v", c, err)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRunReportNamesItsSendAfterARestart: the kept declaration keeps its send id and signature,
// so the first report after a restart, before anything new arrives, still names its send.
func TestRunReportNamesItsSendAfterARestart(t *testing.T) {
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	stop := runHostd(t, cfg, &logBuffer{})
	d := f.publish(1, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	f.waitReport("the first report", func(r hq.Report) bool { return r.Generation == 1 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	restarted := time.Now().UTC()
	f.mu.Lock()
	before := len(f.afters) // the first run may have polled more than once before it applied
	f.mu.Unlock()
	stop = runHostd(t, cfg, &logBuffer{})
	rep := f.waitReport("a report after the restart", func(r hq.Report) bool { return !r.StartedAt.Before(restarted) })
	if rep.SendID != d.SendID || rep.Signature != d.Signature || rep.Generation != 1 || rep.Digest != d.Digest {
		t.Fatalf("after a restart the report names send %d gen %d signed %q, want send %d gen 1 signed %q",
			rep.SendID, rep.Generation, rep.Signature, d.SendID, d.Signature)
	}
	f.mu.Lock()
	for _, after := range f.afters[before:] {
		if after != 1 {
			t.Errorf("polled after %d: the restarted hostd was sent its declaration again", after)
		}
	}
	f.mu.Unlock()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
