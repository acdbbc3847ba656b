package seal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealedToOneKeyOpensWithItAlone(t *testing.T) {
	t.Parallel()
	a, _ := NewKey()
	b, _ := NewKey()
	sealed, err := To(a.Public(), []byte("marker-value"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "marker-value") || !strings.HasPrefix(sealed, "-----BEGIN AGE ENCRYPTED FILE-----") {
		t.Fatalf("not armored ciphertext: %q", sealed)
	}
	got, err := a.Open(sealed)
	if err != nil || string(got) != "marker-value" {
		t.Fatalf("opened %q, %v", got, err)
	}
	if got, err := b.Open(sealed); err == nil || len(got) > 0 {
		t.Fatalf("another key opened it: %q, %v", got, err)
	}
	again, _ := To(a.Public(), []byte("marker-value"))
	if again == sealed {
		t.Fatal("two seals of one value are alike: age is randomized")
	}
}

func TestLoadOrCreateMakesOneKeyOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secrets.key")
	k1, err := LoadOrCreate(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v, %v", fi.Mode(), err)
	}
	k2, err := LoadOrCreate(path)
	if err != nil || k2.Public() != k1.Public() {
		t.Fatalf("a second load made another key: %v", err)
	}
	if err := os.WriteFile(path, []byte("nonsense"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(path); err == nil {
		t.Fatal("a file that holds no key was taken for one")
	}
}
