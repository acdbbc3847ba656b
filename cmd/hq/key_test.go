package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/meshhq/hq/controller"
)

// hq key rotate says until when the key it replaced is honoured, and that is when controllers
// stop honouring it, whatever HQ_KEY_GRACE they serve with: the rotation's, in the file, decides.
func TestKeyRotateStatesTheGraceControllersHonour(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hq.db.key")
	if _, err := controller.LoadOrCreateKeys(path); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	var stdout, stderr bytes.Buffer
	if err := rotateKey(controller.Config{KeyGrace: 24 * time.Hour}, path, now, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`honoured until (\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("hq key rotate does not say until when the old key is honoured:\n%s", stderr.String())
	}
	until, err := time.Parse(time.RFC3339, m[1])
	if err != nil || !until.Equal(now.Add(24*time.Hour)) {
		t.Fatalf("hq key rotate says the old key is honoured until %s (%v), want %s", m[1], err, now.Add(24*time.Hour))
	}
	k, err := controller.ReadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, serving := range []time.Duration{time.Hour, 168 * time.Hour} {
		if got := k.ForAPI(until.Add(-time.Second), serving); len(got.Chain) != 1 || len(got.Honoured) != 2 {
			t.Errorf("a controller with HQ_KEY_GRACE %s, a second before %s: chain %d, honoured %d; want the old key honoured",
				serving, m[1], len(got.Chain), len(got.Honoured))
		}
		if got := k.ForAPI(until, serving); len(got.Chain) != 0 || len(got.Honoured) != 1 {
			t.Errorf("a controller with HQ_KEY_GRACE %s, at %s: chain %d, honoured %d; want the old key retired",
				serving, m[1], len(got.Chain), len(got.Honoured))
		}
	}
}
