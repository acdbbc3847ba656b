package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database at src to dst while controllers serve from
// it and reports keep arriving: VACUUM INTO reads one snapshot of the database (WAL included)
// in a read transaction, so writers go on. The copy is written beside dst, synced and renamed
// into place, so dst is either the whole backup or absent; it is created 0600 like the
// database, whose modules may hold secrets. dst must not exist yet.
func Backup(ctx context.Context, src, dst string) error {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("backup: %s exists; name a new file", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	// No journal_mode pragma: the live database is already WAL, and a reader must not change it.
	conn, err := sql.Open("sqlite", "file:"+src+"?"+q.Encode())
	if err != nil {
		return fmt.Errorf("backup: open %s: %w", src, err)
	}
	defer conn.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName) // gone after the rename; left behind only on failure
	// VACUUM INTO wants a file that does not exist or is empty; the empty one made above has
	// the mode the backup keeps (CreateTemp makes it 0600).
	if _, err := conn.ExecContext(ctx, "VACUUM INTO ?", tmpName); err != nil {
		return fmt.Errorf("backup: VACUUM INTO: %w", err)
	}
	f, err := os.Open(tmpName)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("backup: sync: %w", err)
	}
	// A link refuses an existing dst, which a rename would overwrite.
	if err := os.Link(tmpName, dst); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	return syncDir(filepath.Dir(dst))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
