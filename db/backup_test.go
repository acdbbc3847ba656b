package db

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/sqlite"
	"github.com/meshhq/hq/internal/testdb"
)

// TestBackupWhileWriting copies the database while another goroutine keeps writing: the copy
// is whole (integrity_check passes), opens as a store, and holds what was written before it.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	if testdb.Postgres() {
		t.Skip("hq backup copies a SQLite file; a PostgreSQL database is backed up with its own tools")
	}
	s, _ := setup(t)
	ctx := context.Background()
	mustNode(t, s, "before")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.PutModule(ctx, "m", []hq.Resource{file("f", string(rune('a'+i%26)))}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	dst := filepath.Join(t.TempDir(), "backup.db")
	err := sqlite.Backup(ctx, s.path, dst)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600", fi.Mode().Perm())
	}
	raw, err := sql.Open("sqlite", "file:"+dst)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	raw.Close()
	b, err := Open(ctx, dst, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.GetNode(ctx, "before"); err != nil {
		t.Fatalf("the backup lacks what was written before it: %v", err)
	}
	if err := sqlite.Backup(ctx, s.path, dst); err == nil {
		t.Fatal("a backup over an existing file succeeded; want it refused")
	}
}
