package controller

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Controllers starting together on a fresh database agree on one key, made 0600.
func TestLoadOrCreateKeyConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hq.db.key")
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := LoadOrCreateKey(path)
			if err != nil {
				t.Error(err)
				return
			}
			keys[i] = k
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
	os.WriteFile(path, []byte("not a key"), 0o600)
	if _, err := LoadOrCreateKey(path); err == nil {
		t.Fatal("a garbled key file was accepted")
	}
}
