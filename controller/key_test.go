package controller

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/pem"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshhq/hq/internal/wait"
	"github.com/meshhq/hq/keys"
)

// Controllers starting together on a fresh database agree on one key, made 0600.
func TestLoadOrCreateKeyConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hq.db.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := LoadOrCreateKeys(path)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k.Key
		})
	}
	wg.Wait()
	for _, k := range keys[1:] {
		if !bytes.Equal(k, keys[0]) {
			t.Fatal("two controllers made different keys")
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v (%v), want 0600", fi.Mode(), err)
	}
	writeFile(t, path, []byte("not a key"))
	if _, err := LoadOrCreateKeys(path); err == nil {
		t.Fatal("a garbled key file was accepted")
	}
}

// oldKeyFile writes a key file as hq wrote them before rotation: the seed's block alone.
func oldKeyFile(t *testing.T) (string, ed25519.PrivateKey) {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(nil)
	path := filepath.Join(t.TempDir(), "hq.db.key")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "HQ ED25519 PRIVATE KEY", Bytes: key.Seed()}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, key
}

var t0 = time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)

const week = 7 * 24 * time.Hour

// The key files operators have load as keys never rotated, and rotate like any other.
func TestKeyFileFromBeforeRotationLoadsAndRotates(t *testing.T) {
	path, old := oldKeyFile(t)
	k, err := ReadKeys(path)
	if err != nil || !k.Key.Equal(old) || len(k.Rotations) != 0 {
		t.Fatalf("an old key file: %v, %d rotations", err, len(k.Rotations))
	}
	k2, err := RotateKeys(path, t0, week)
	if err != nil {
		t.Fatal(err)
	}
	if k2.Key.Equal(old) || len(k2.Rotations) != 1 {
		t.Fatalf("after a rotation: the same key %v, %d rotations", k2.Key.Equal(old), len(k2.Rotations))
	}
	read, err := ReadKeys(path)
	if err != nil || !read.Key.Equal(k2.Key) || len(read.Rotations) != 1 || read.Rotations[0] != k2.Rotations[0] {
		t.Fatalf("the file after a rotation reads %+v, %v; want %+v", read, err, k2)
	}
	next, err := keys.FollowChain(old.Public().(ed25519.PublicKey), read.ForAPI(t0, week).Chain)
	if err != nil || !next.Equal(read.Public()) {
		t.Fatalf("the old key does not lead to the new one: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v (%v), want 0600", fi.Mode(), err)
	}
	if b := readFile(t, path); bytes.Count(b, []byte("BEGIN "+pemKey)) != 1 || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(old.Seed()))) {
		t.Fatal("the rotated-away private key is still in the file")
	}
	noTemps(t, filepath.Dir(path))
}

// Two rotations make a chain K1→K2→K3 a host holding K1 can follow while both are in grace.
// Past the first's grace K1 is retired: not vouched for, not honoured, and dropped from the
// file at the next rotation.
func TestRotationsChainAndRetire(t *testing.T) {
	path, k1 := oldKeyFile(t)
	pub1 := k1.Public().(ed25519.PublicKey)
	if _, err := RotateKeys(path, t0, week); err != nil {
		t.Fatal(err)
	}
	k3, err := RotateKeys(path, t0.Add(3*24*time.Hour), week)
	if err != nil {
		t.Fatal(err)
	}
	pub2, err := keys.ParsePublic(k3.Rotations[1].Vouch.By)
	if err != nil {
		t.Fatal(err)
	}
	within := k3.ForAPI(t0.Add(week-time.Minute), week)
	if next, err := keys.FollowChain(pub1, within.Chain); err != nil || !next.Equal(k3.Public()) {
		t.Fatalf("K1 does not lead to K3 within grace: %v", err)
	}
	if len(within.Honoured) != 3 || !within.Honoured[0].Equal(k3.Public()) {
		t.Fatalf("honoured within grace: %d keys", len(within.Honoured))
	}

	past := k3.ForAPI(t0.Add(week+time.Minute), week)
	if _, err := keys.FollowChain(pub1, past.Chain); err == nil {
		t.Fatal("a retired key still leads to the key signing now")
	}
	if next, err := keys.FollowChain(pub2, past.Chain); err != nil || !next.Equal(k3.Public()) {
		t.Fatalf("K2, in grace, does not lead to K3: %v", err)
	}
	if len(past.Honoured) != 2 || past.Honoured[1].Equal(pub1) {
		t.Fatalf("a retired key is still honoured: %d keys", len(past.Honoured))
	}

	k4, err := RotateKeys(path, t0.Add(week+time.Hour), week)
	if err != nil {
		t.Fatal(err)
	}
	if len(k4.Rotations) != 2 || k4.rotatedAway(pub1) || !k4.rotatedAway(pub2) {
		t.Fatalf("after a rotation past K1's grace the file holds %d rotations (K1's: %v)", len(k4.Rotations), k4.rotatedAway(pub1))
	}
	if read, err := ReadKeys(path); err != nil || len(read.Rotations) != 2 {
		t.Fatalf("the file reads %v", err)
	}
}

// The grace of a rotation is the one it was made with, recorded in the file: a controller
// serving with another HQ_KEY_GRACE honours the replaced key exactly as long.
func TestRotationRecordsItsGrace(t *testing.T) {
	path, k1 := oldKeyFile(t)
	if _, err := RotateKeys(path, t0, 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if b := readFile(t, path); !bytes.Contains(b, []byte("Honoured-Until: "+t0.Add(24*time.Hour).Format(time.RFC3339))) {
		t.Fatalf("the file does not record the end of the rotation's grace:\n%s", b)
	}
	for _, serving := range []time.Duration{time.Hour, week} {
		w, err := newKeyWatcher(path, serving, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		w.now = func() time.Time { return t0.Add(24*time.Hour - time.Minute) }
		w.check()
		if got := w.current(); len(got.Chain) != 1 || !got.Honoured[1].Equal(k1.Public()) {
			t.Errorf("HQ_KEY_GRACE %s, within the rotation's grace: chain %d, honoured %d", serving, len(got.Chain), len(got.Honoured))
		}
		w.now = func() time.Time { return t0.Add(24*time.Hour + time.Minute) }
		w.check()
		if got := w.current(); len(got.Chain) != 0 || len(got.Honoured) != 1 {
			t.Errorf("HQ_KEY_GRACE %s, past the rotation's grace: chain %d, honoured %d", serving, len(got.Chain), len(got.Honoured))
		}
	}
}

// A vouch written before key files recorded the end of its grace loads, is honoured for the
// reader's HQ_KEY_GRACE, and keeps no recorded end through a later rotation, whose own end is
// recorded.
func TestVouchWithoutRecordedGrace(t *testing.T) {
	path, k1 := oldKeyFile(t)
	_, k2, _ := ed25519.GenerateKey(nil)
	v := keys.NewVouch(k1, k2.Public().(ed25519.PublicKey))
	sig, err := base64.StdEncoding.DecodeString(v.Signature)
	if err != nil {
		t.Fatal(err)
	}
	old := append(pem.EncodeToMemory(&pem.Block{Type: "HQ ED25519 PRIVATE KEY", Bytes: k2.Seed()}),
		pem.EncodeToMemory(&pem.Block{Type: "HQ KEY VOUCH", Bytes: sig, Headers: map[string]string{
			"By": v.By, "Key": v.Key, "Rotated-At": t0.Format(time.RFC3339)}})...)
	if err := os.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := ReadKeys(path)
	if err != nil || !k.Key.Equal(k2) || len(k.Rotations) != 1 || !k.Rotations[0].Until.IsZero() {
		t.Fatalf("a key file with a vouch of before: %v", err)
	}
	if got := k.ForAPI(t0.Add(2*time.Hour-time.Minute), 2*time.Hour); len(got.Chain) != 1 {
		t.Fatalf("within the reader's grace: chain %d", len(got.Chain))
	}
	if got := k.ForAPI(t0.Add(2*time.Hour), 2*time.Hour); len(got.Chain) != 0 {
		t.Fatalf("past the reader's grace: chain %d", len(got.Chain))
	}

	k3, err := RotateKeys(path, t0.Add(time.Hour), 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(k3.Rotations) != 2 || !k3.Rotations[0].Until.IsZero() || !k3.Rotations[1].Until.Equal(t0.Add(25*time.Hour)) {
		t.Fatalf("after a rotation: %+v", k3.Rotations)
	}
	if got := k3.ForAPI(t0.Add(90*time.Minute), 2*time.Hour); len(got.Chain) != 2 {
		t.Fatalf("both in grace: chain %d", len(got.Chain))
	}
	if got := k3.ForAPI(t0.Add(3*time.Hour), 2*time.Hour); len(got.Chain) != 1 || got.Chain[0].By != k3.Rotations[1].Vouch.By {
		t.Fatalf("the vouch of before past the reader's grace, the new one in its own: chain %d", len(got.Chain))
	}
}

// A rotation of nothing, or of a file that is not whole, is refused and changes nothing.
func TestRotateRefusesWhatIsNotAKeyFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "hq.db.key")
	if _, err := RotateKeys(missing, t0, week); err == nil || !strings.Contains(err.Error(), "no signing key") {
		t.Fatalf("rotating no key: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("rotating no key made one")
	}

	path, _ := oldKeyFile(t)
	rotated, err := RotateKeys(path, t0, week)
	if err != nil {
		t.Fatal(err)
	}
	good := readFile(t, path)
	tampered := bytes.Replace(good, []byte(rotated.Rotations[0].Vouch.Key), []byte(rotated.Rotations[0].Vouch.By), 1)
	_, other, _ := ed25519.GenerateKey(nil)
	swapped := append(pem.EncodeToMemory(&pem.Block{Type: pemKey, Bytes: other.Seed()}), good[bytes.Index(good, []byte("-----BEGIN "+pemVouch)):]...)
	for name, c := range map[string]struct {
		content []byte
		want    string
	}{
		"garbled":           {[]byte("not a key"), "no signing key"},
		"two keys":          {append(pem.EncodeToMemory(&pem.Block{Type: pemKey, Bytes: other.Seed()}), good...), "one signing key"},
		"a foreign block":   {append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")}), good...), "nothing of hq's"},
		"a tampered vouch":  {tampered, "does not verify"},
		"another key signs": {swapped, "not for its signing key"},
		"a torn end":        {good[:len(good)-20], "besides PEM"},
		"no rotation time":  {bytes.Replace(good, []byte("Rotated-At"), []byte("Rotated-On"), 1), "Rotated-At"},
		"a garbled grace":   {bytes.Replace(good, []byte("Honoured-Until: "), []byte("Honoured-Until: soon"), 1), "Honoured-Until"},
	} {
		writeFile(t, path, c.content)
		if _, err := RotateKeys(path, t0, week); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, c.want)
		}
		if b := readFile(t, path); !bytes.Equal(b, c.content) {
			t.Errorf("%s: a refused rotation changed the file", name)
		}
	}
	noTemps(t, filepath.Dir(path))
}

// Rotations at once take turns: none is lost, and the chain holds every one of them.
func TestConcurrentRotationsChain(t *testing.T) {
	path, _ := oldKeyFile(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := RotateKeys(path, time.Now(), week); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	k, err := ReadKeys(path)
	if err != nil || len(k.Rotations) != 4 {
		t.Fatalf("after 4 rotations at once: %v, %d rotations", err, len(k.Rotations))
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// renameOver puts b in path at once, by a rename, as an operator's tools replace a file.
func renameOver(t *testing.T, path string, b []byte) {
	t.Helper()
	writeFile(t, path+".tmp", b)
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func noTemps(t *testing.T, dir string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".hq-key-") {
			t.Fatalf("left behind %s", e.Name())
		}
	}
}

// HQ_KEY_FILE wins; without it the key is beside a database file, and a database that is not
// a file needs it.
func TestSigningKeyFile(t *testing.T) {
	for _, c := range []struct {
		db, keyFile, want, err string
	}{
		{db: "/var/lib/hq/hq.db", want: "/var/lib/hq/hq.db.key"},
		{db: "./hq.db", want: "./hq.db.key"},
		{db: "/var/lib/hq/hq.db", keyFile: "/etc/hq/signing.key", want: "/etc/hq/signing.key"},
		{db: "postgres://hq:s3cret@db.example/hq", keyFile: "/etc/hq/signing.key", want: "/etc/hq/signing.key"},
		{db: "postgres://hq:s3cret@db.example/hq", err: "HQ_KEY_FILE is required"},
		{db: "postgresql:///hq?host=/run/postgresql", err: "HQ_KEY_FILE is required"},
	} {
		got, err := Config{DB: c.db, KeyFile: c.keyFile}.SigningKeyFile()
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %q, %v; want an error with %q", c.db, got, err, c.err)
		case c.err != "" && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("%s: the error shows the password: %v", c.db, err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s, %s: %q, %v; want %q", c.db, c.keyFile, got, err, c.want)
		}
	}
	cfg := Config{DB: "postgres://db.example/hq", AdminToken: "x", StuckAttempts: 1, StuckAfter: 1, SilentAfter: 1,
		DriftThreshold: 1, Retain: 1, PruneEvery: 1, MaxReportsInFlight: 1, RetryAfter: 1, MaxConns: 1, KeyGrace: week}
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), "HQ_KEY_FILE") {
		t.Fatalf("Check of a URL database without HQ_KEY_FILE: %v", err)
	}
}

// A serving controller signs with a rotated key within a period of the watch, honouring the
// key before; a file that does not load changes nothing; an unrelated key is used, and said
// to be unvouched; a rotation past its grace stops being honoured with no change to the file.
func TestKeyWatcherFollowsTheFile(t *testing.T) {
	path, k1 := oldKeyFile(t)
	var logs syncBuf
	w, err := newKeyWatcher(path, week, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.run(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs.String())
		}
	}()
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		wait.For(t, 5*time.Second, what, cond)
	}

	k2, err := RotateKeys(path, time.Now(), week)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil("the rotated key", func() bool { return w.current().Sign.Equal(k2.Key) })
	if got := w.current(); len(got.Chain) != 1 || len(got.Honoured) != 2 || !got.Honoured[1].Equal(k1.Public()) {
		t.Fatalf("after a rotation: chain %d, honoured %d", len(got.Chain), len(got.Honoured))
	}
	waitUntil("the rotation logged", func() bool {
		return strings.Contains(logs.String(), "signing with a rotated key") &&
			strings.Contains(logs.String(), "new_fingerprint="+keys.Fingerprint(k2.Public()))
	})

	good := readFile(t, path)
	renameOver(t, path, []byte("half a key"))
	waitUntil("the bad file logged", func() bool { return strings.Contains(logs.String(), "does not load") })
	if !w.current().Sign.Equal(k2.Key) {
		t.Fatal("a file that does not load changed the key")
	}

	_, stranger, _ := ed25519.GenerateKey(nil)
	renameOver(t, path, pem.EncodeToMemory(&pem.Block{Type: pemKey, Bytes: stranger.Seed()}))
	waitUntil("the unrelated key", func() bool { return w.current().Sign.Equal(stranger) })
	if len(w.current().Chain) != 0 || !strings.Contains(logs.String(), "does not vouch for") {
		t.Fatalf("an unrelated key: chain %d; log:\n%s", len(w.current().Chain), logs.String())
	}

	cancel()
	<-done
	writeFile(t, path, good)
	w.check()
	if got := w.current(); !got.Sign.Equal(k2.Key) || len(got.Honoured) != 2 {
		t.Fatalf("the rotated file back: honoured %d", len(got.Honoured))
	}
	w.now = func() time.Time { return time.Now().Add(week + time.Minute) }
	w.check()
	if got := w.current(); !got.Sign.Equal(k2.Key) || len(got.Chain) != 0 || len(got.Honoured) != 1 {
		t.Fatalf("past grace: chain %d, honoured %d", len(got.Chain), len(got.Honoured))
	}
	if !strings.Contains(logs.String(), "retired") {
		t.Fatalf("the retirement is not logged:\n%s", logs.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
