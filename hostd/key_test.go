package hostd

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/keys"
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
	if !strings.Contains(rep.Refused.Reason, "signed by key "+keyFingerprint(pub)) || !strings.Contains(rep.Refused.Reason, "does not vouch for") || rep.Generation != 1 {
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

// keysKept reads the keys the state dir keeps, as fingerprints.
func keysKept(t *testing.T, stateDir string) []string {
	t.Helper()
	keys, err := readKeys(filepath.Join(stateDir, keyFile))
	if err != nil {
		t.Fatal(err)
	}
	var fps []string
	for _, k := range keys {
		fps = append(fps, keyFingerprint(k))
	}
	return fps
}

// The adoption rule: a host that followed a rotation holds the newest key it adopted whatever
// key of its chain HOSTD_CONTROLLER_KEY names, never an older one; a HOSTD_CONTROLLER_KEY
// outside that chain is the operator's word and is held instead.
func TestTrustHoldsTheNewestKeyOfItsChain(t *testing.T) {
	k1, k2, k3, k9 := newTestKey(t), newTestKey(t), newTestKey(t), newTestKey(t)
	pub := func(k ed25519.PrivateKey) ed25519.PublicKey { return k.Public().(ed25519.PublicKey) }
	b64 := func(k ed25519.PrivateKey) string { return base64.StdEncoding.EncodeToString(pub(k)) }
	state := t.TempDir()
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	load := func(cfg Config) *trust {
		t.Helper()
		cfg.StateDir = state
		tr, err := loadTrust(context.Background(), cfg, nil, log)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	decl := func(k ed25519.PrivateKey, chain ...keys.Vouch) *hq.Declaration {
		d := &hq.Declaration{Node: "web-1", Generation: 5, Modules: []hq.DeclaredModule{}}
		d.Digest = d.ComputeDigest()
		d.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(k, keys.DeclarationStatement(d.Node, d.Generation, d.Digest)))
		d.Key, d.KeyChain = b64(k), chain
		return d
	}

	tr := load(Config{ControllerKey: b64(k1)})
	if !tr.held().Equal(pub(k1)) || fileExists(filepath.Join(state, keyFile)) {
		t.Fatal("a fresh host does not hold HOSTD_CONTROLLER_KEY alone")
	}
	if err := tr.verify(decl(k2, keys.NewVouch(k1, pub(k2))), "web-1"); err != nil {
		t.Fatal(err)
	}
	if !tr.held().Equal(pub(k2)) || !slices.Equal(keysKept(t, state), []string{keyFingerprint(pub(k1)), keyFingerprint(pub(k2))}) {
		t.Fatalf("after adopting K2: holds %s, kept %v", keyFingerprint(tr.held()), keysKept(t, state))
	}
	if !strings.Contains(logs.String(), "old_fingerprint="+keyFingerprint(pub(k1))) || !strings.Contains(logs.String(), "new_fingerprint="+keyFingerprint(pub(k2))) {
		t.Fatalf("the adoption does not log both fingerprints:\n%s", logs)
	}
	// A controller still signing with K1 is refused, and said to be one this host rotated away from.
	if err := tr.verify(decl(k1), "web-1"); err == nil || !strings.Contains(err.Error(), "rotated away from") {
		t.Fatalf("a declaration signed by the key rotated away from: %v", err)
	}

	for name, cfg := range map[string]Config{
		"the first key": {ControllerKey: b64(k1)},
		"the newest":    {ControllerKey: b64(k2)},
		"learnt":        {LearnKey: true},
	} {
		if got := load(cfg).held(); !got.Equal(pub(k2)) {
			t.Errorf("restarted with %s: holds %s, not K2", name, keyFingerprint(got))
		}
	}

	// A rotation learnt from a report answer; a key held before, offered by a controller that
	// has not read the rotation yet, changes nothing and says nothing.
	tr = load(Config{ControllerKey: b64(k1)})
	tr.offer(b64(k3), []keys.Vouch{keys.NewVouch(k1, pub(k2)), keys.NewVouch(k2, pub(k3))})
	if !tr.held().Equal(pub(k3)) || len(keysKept(t, state)) != 3 {
		t.Fatalf("offered K3 through K2: holds %s, kept %v", keyFingerprint(tr.held()), keysKept(t, state))
	}
	before := logs.String()
	tr.offer(b64(k1), nil)
	tr.offer(b64(k9), nil)
	tr.offer(b64(k9), nil)
	if !tr.held().Equal(pub(k3)) || strings.Count(logs.String(), "does not vouch for") != 1 || strings.Contains(strings.TrimPrefix(logs.String(), before), keyFingerprint(pub(k1))) {
		t.Fatalf("offers not vouched for changed the key or were not logged once:\n%s", strings.TrimPrefix(logs.String(), before))
	}
	// What was applied under K1 still reconciles after a restart.
	if err := load(Config{LearnKey: true}).verifyKept(decl(k1), "web-1"); err != nil {
		t.Fatalf("the kept declaration signed by a key held before: %v", err)
	}
	if err := load(Config{LearnKey: true}).verifyKept(decl(k9), "web-1"); err == nil {
		t.Fatal("a kept declaration signed by a key never held was accepted")
	}

	// The operator's key outside the chain wins, and the chain is set aside.
	tr = load(Config{ControllerKey: b64(k9)})
	if !tr.held().Equal(pub(k9)) || !slices.Equal(keysKept(t, state), []string{keyFingerprint(pub(k9))}) {
		t.Fatalf("re-provisioned with K9: holds %s, kept %v", keyFingerprint(tr.held()), keysKept(t, state))
	}
	if !strings.Contains(logs.String(), "not among the keys this host adopted") {
		t.Fatalf("setting the chain aside is not logged:\n%s", logs)
	}

	os.WriteFile(filepath.Join(state, keyFile), []byte("not a key\n"), 0o600)
	if _, err := loadTrust(context.Background(), Config{ControllerKey: b64(k1), StateDir: state}, nil, log); err == nil || !strings.Contains(err.Error(), "remove the file") {
		t.Fatalf("a garbled keys file: %v", err)
	}
}

// A key that cannot be kept is not adopted: the declaration is refused and the key held stays.
func TestTrustAdoptsOnlyWhatItKeeps(t *testing.T) {
	k1, k2 := newTestKey(t), newTestKey(t)
	state := t.TempDir()
	tr, err := loadTrust(context.Background(), Config{ControllerKey: base64.StdEncoding.EncodeToString(k1.Public().(ed25519.PublicKey)), StateDir: state}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(state, keyFile), 0o700) // a directory where the file is renamed into place
	d := &hq.Declaration{Node: "web-1", Generation: 1, Modules: []hq.DeclaredModule{}}
	d.Digest = d.ComputeDigest()
	d.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(k2, keys.DeclarationStatement(d.Node, d.Generation, d.Digest)))
	d.Key, d.KeyChain = base64.StdEncoding.EncodeToString(k2.Public().(ed25519.PublicKey)), []keys.Vouch{keys.NewVouch(k1, k2.Public().(ed25519.PublicKey))}
	if err := tr.verify(d, "web-1"); err == nil || !strings.Contains(err.Error(), "keeping it failed") {
		t.Fatalf("a key that cannot be kept: %v", err)
	}
	if !tr.held().Equal(k1.Public().(ed25519.PublicKey)) {
		t.Fatal("a key that could not be kept is held")
	}
}

// Run follows a rotation: a declaration signed by the new key with the chain from the key held
// is applied and the key adopted; one signed by a key nothing vouches for is refused, the
// refusal naming both keys, and nothing applied; after a restart with the first key
// configured, a declaration the old key signs is refused.
func TestRunFollowsARotatedKey(t *testing.T) {
	t.Parallel()
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	logs := &logBuffer{}
	stop := runHostd(t, cfg, logs)
	old, priv1 := f.pub, f.priv
	f.send(1, nil, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	f.waitReport("the report of generation 1", func(r hq.Report) bool { return r.Generation == 1 })

	pub2, priv2, _ := ed25519.GenerateKey(nil)
	f.mu.Lock()
	f.chain = []keys.Vouch{keys.NewVouch(f.priv, pub2)}
	f.pub, f.priv = pub2, priv2
	f.mu.Unlock()
	f.send(2, nil, mod("app", false, file("conf", "/etc/app.conf", "v2")))
	f.waitReport("the report of generation 2", func(r hq.Report) bool { return r.Generation == 2 && r.Refused == nil })
	if c, _ := os.ReadFile(filepath.Join(cfg.Root, "etc/app.conf")); string(c) != "v2" {
		t.Fatalf("content %q after a declaration by the rotated key", c)
	}
	if kept := keysKept(t, cfg.StateDir); !slices.Equal(kept, []string{keyFingerprint(old), keyFingerprint(pub2)}) {
		t.Fatalf("kept %v", kept)
	}
	if !strings.Contains(logs.String(), "new_fingerprint="+keyFingerprint(pub2)) {
		t.Fatalf("the adoption is not logged:\n%s", logs)
	}

	_, stranger, _ := ed25519.GenerateKey(nil)
	f.mu.Lock()
	f.chain = nil
	f.pub, f.priv = stranger.Public().(ed25519.PublicKey), stranger
	f.mu.Unlock()
	f.send(3, nil, mod("app", false, file("conf", "/etc/app.conf", "v3")))
	rep := f.waitReport("the refusal of generation 3", func(r hq.Report) bool { return r.Refused != nil && r.Refused.Generation == 3 })
	for _, want := range []string{"signed by key " + keyFingerprint(f.pub), "(" + keyFingerprint(pub2) + ") does not vouch for"} {
		if !strings.Contains(rep.Refused.Reason, want) {
			t.Fatalf("refusal %q does not say %q", rep.Refused.Reason, want)
		}
	}
	if c, _ := os.ReadFile(filepath.Join(cfg.Root, "etc/app.conf")); string(c) != "v2" || rep.Generation != 2 {
		t.Fatalf("content %q, report of generation %d after an unvouched key", c, rep.Generation)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Restarted with the first key still configured, it holds the adopted one: a declaration
	// the first key signs is refused.
	stop = runHostd(t, cfg, logs)
	d := f.sign(4, priv1, mod("app", false, file("conf", "/etc/app.conf", "v4")))
	d.Key = base64.StdEncoding.EncodeToString(old)
	// Published, not queued: a poll of the stopped hostd may still be waiting on the queue.
	f.mu.Lock()
	f.current = d
	f.mu.Unlock()
	rep = f.waitReport("the refusal of generation 4", func(r hq.Report) bool { return r.Refused != nil && r.Refused.Generation == 4 })
	if !strings.Contains(rep.Refused.Reason, "rotated away from") {
		t.Fatalf("refusal %q", rep.Refused.Reason)
	}
	if c, _ := os.ReadFile(filepath.Join(cfg.Root, "etc/app.conf")); string(c) != "v2" {
		t.Fatalf("content %q after a declaration by the key rotated away from, after a restart", c)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// A host follows a rotation from a report answer alone, with no new declaration, and keeps
// reconciling what it applied under the old key, across a restart too.
func TestRunFollowsARotationFromReportAnswers(t *testing.T) {
	t.Parallel()
	f, srv := newFakeController(t)
	cfg := f.config(srv)
	cfg.Interval = 100 * time.Millisecond
	logs := &logBuffer{}
	stop := runHostd(t, cfg, logs)
	f.send(1, nil, mod("app", false, file("conf", "/etc/app.conf", "v1")))
	f.waitReport("the report of generation 1", func(r hq.Report) bool { return r.Generation == 1 })

	pub2, priv2, _ := ed25519.GenerateKey(nil)
	f.mu.Lock()
	f.chain = []keys.Vouch{keys.NewVouch(f.priv, pub2)}
	f.pub, f.priv, f.announce = pub2, priv2, true
	f.mu.Unlock()
	waitFor(t, 10*time.Second, "the key adopted from a report answer", func() bool {
		return strings.Contains(logs.String(), "new_fingerprint="+keyFingerprint(pub2)+" via=\"report answer\"")
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cfg.Root, "etc/app.conf"), []byte("changed behind its back"), 0o644)
	logs2 := &logBuffer{}
	stop = runHostd(t, cfg, logs2)
	waitFor(t, 10*time.Second, "the kept declaration reconciled after a restart", func() bool {
		c, _ := os.ReadFile(filepath.Join(cfg.Root, "etc/app.conf"))
		return string(c) == "v1"
	})
	if strings.Contains(logs2.String(), "ignoring the kept declaration") || !strings.Contains(logs2.String(), "key="+keyFingerprint(pub2)) {
		t.Fatalf("after a restart:\n%s", logs2)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
