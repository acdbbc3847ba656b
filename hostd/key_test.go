package hostd

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

func TestRunRefusesToStartWithoutAKey(t *testing.T) {
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	cfg.ControllerKey = ""
	err := runHostd(t, cfg, &logBuffer{})()
	if !errors.Is(err, errNoKeyConfigured) || !strings.Contains(err.Error(), "HOSTD_LEARN_KEY=1") {
		t.Fatalf("Run without a key: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keyFetches != 0 || len(f.afters) != 0 {
		t.Fatalf("%d key fetches and %d polls without a key", f.keyFetches, len(f.afters))
	}
}

// TestRunLearnsTheKeyOnlyFromTheController: a key fetch that fails is retried, and until one
// works nothing is fetched or applied; the key learned is kept, and after a restart a
// declaration signed with another key the controller offers is refused.
func TestRunLearnsTheKeyOnlyFromTheController(t *testing.T) {
	t.Parallel()
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	cfg.ControllerKey, cfg.LearnKey = "", true
	f.keyAnswers = []int{http.StatusNotFound, http.StatusInternalServerError}
	f.send(1, nil, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	logs := &logBuffer{}
	stop := runHostd(t, cfg, logs)
	waitFor(t, 5*time.Second, "two failed key fetches", func() bool {
		return strings.Count(logs.String(), "fetching the controller key") == 2
	})
	f.mu.Lock()
	polls := len(f.afters)
	f.mu.Unlock()
	if polls != 0 || fileExists(filepath.Join(cfg.Root, "etc/app.conf")) {
		t.Fatalf("%d polls before the key was learned; applied: %v", polls, fileExists(filepath.Join(cfg.Root, "etc/app.conf")))
	}
	if !strings.Contains(logs.String(), "404 Not Found") {
		t.Fatalf("the failed fetch does not say what the controller answered:\n%s", logs)
	}
	f.waitReport("the report of generation 1", func(r hq.Report) bool { return r.Generation == 1 })
	kept, err := os.ReadFile(filepath.Join(cfg.StateDir, keyFile))
	if want := base64.StdEncoding.EncodeToString(f.pub) + "\n"; err != nil || string(kept) != want {
		t.Fatalf("kept key %q, %v; want %q", kept, err, want)
	}
	if !strings.Contains(logs.String(), "fingerprint="+keyFingerprint(f.pub)) {
		t.Fatalf("the learned key's fingerprint is not logged:\n%s", logs)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// The controller now offers another key: the one kept is used, and not asked again.
	pub, priv, _ := ed25519.GenerateKey(nil)
	f.mu.Lock()
	f.pub, f.priv = pub, priv
	fetches := f.keyFetches
	f.mu.Unlock()
	stop = runHostd(t, cfg, &logBuffer{})
	// Published, not queued: a poll of the stopped hostd may still be waiting on the queue.
	f.publish(2, mod("app", false, file("conf", "/etc/app.conf", "v2")))
	rep := f.waitReport("a refusal of generation 2", func(r hq.Report) bool { return r.Refused != nil && r.Refused.Generation == 2 })
	if !strings.Contains(rep.Refused.Reason, "does not verify") || rep.Generation != 1 {
		t.Fatalf("report %+v, refusal %+v", rep, rep.Refused)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keyFetches != fetches {
		t.Fatal("a kept key was fetched again")
	}
	if c, _ := os.ReadFile(filepath.Join(cfg.Root, "etc/app.conf")); string(c) != "v1" {
		t.Fatalf("content %q after a declaration signed with another key", c)
	}
}

// TestRunStopsWhileLearningTheKey: a hostd that cannot learn its key keeps trying until it is
// stopped, and then returns without an error.
func TestRunStopsWhileLearningTheKey(t *testing.T) {
	t.Parallel()
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	cfg.ControllerKey, cfg.LearnKey = "", true
	f.keyAnswers = []int{http.StatusNotFound, http.StatusNotFound, http.StatusNotFound}
	logs := &logBuffer{}
	stop := runHostd(t, cfg, logs)
	waitFor(t, 5*time.Second, "a failed key fetch", func() bool { return strings.Contains(logs.String(), "fetching the controller key") })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if fileExists(filepath.Join(cfg.StateDir, keyFile)) {
		t.Fatal("a key was kept though none was learned")
	}
}

func fileExists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}
