package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshhq/hq/db"
	_ "github.com/meshhq/hq/db/sqlite"
	"github.com/meshhq/hq/seal"
)

// hq secret rekey leaves the key file (mode 0600) with a new key that every version is
// encrypted to, and no FILE.old.
func TestSecretRekeyReplacesTheKeyFile(t *testing.T) {
	dir := t.TempDir()
	dsn, path := filepath.Join(dir, "hq.db"), filepath.Join(dir, "hq.db.secrets.key")
	keys, err := seal.LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	old := keys.Current()
	s, err := db.Open(t.Context(), dsn, db.Options{SecretsKey: keys})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.PutSecret(t.Context(), "app/db", []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := rekey(t.Context(), dsn, path); err != nil || n != 3 {
		t.Fatalf("rekey: %d, %v", n, err)
	}
	if _, err := os.Stat(path + seal.OldSuffix); !os.IsNotExist(err) {
		t.Fatalf("FILE.old is left: %v", err)
	}
	now, err := seal.Read(path)
	if err != nil || now.Public() == old.Public() {
		t.Fatalf("the key file after the rekey: %v", err)
	}
	if n, err := s.RekeySecrets(t.Context(), now, 10); err != nil || n != 0 {
		t.Fatalf("a version not encrypted to the new key: %d, %v", n, err)
	}
	s.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the new key file: %v, %v", fi.Mode(), err)
	}
}
