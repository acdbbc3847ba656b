//go:build unix

package db

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/meshhq/hq"
)

// The database, its WAL and its shared-memory file are readable by their owner alone, even
// under a umask that lets the world read new files.
func TestDatabaseFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "hq.db")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.PutModule(context.Background(), "app", []hq.Resource{file("a", "secret")}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", filepath.Base(p), m)
		}
	}
}
