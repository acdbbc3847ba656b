package hostd

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// tempName is a hidden name beside target that keeps target's base name (and so its
// extension, which some validators look at).
func tempName(target, what string) string {
	var b [6]byte
	rand.Read(b[:])
	return filepath.Join(filepath.Dir(target), ".hostd-"+what+"-"+hex.EncodeToString(b[:])+"-"+filepath.Base(target))
}

// mkdirs creates dir and its missing parents with mode 0755 and returns those it created,
// outermost first, so undo can remove exactly them.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return nil, &os.PathError{Op: "mkdir", Path: d, Err: errors.New("not a directory")}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// removeDirs removes the directories mkdirs made, innermost first, if they are empty.
func removeDirs(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		os.Remove(made[i])
	}
}

// keepBackup hard-links what is at abs to a hidden name beside it, so commit can replace abs
// and undo can put the original back. A hard link costs no copy; it also works for a symlink,
// which is linked, not followed.
func keepBackup(o *op) error {
	if !o.present || o.info.IsDir() {
		return nil
	}
	b := o.aside
	if b == "" {
		b = tempName(o.abs, "undo")
	}
	if err := os.Link(o.abs, b); err != nil {
		return err
	}
	o.backup = b
	return nil
}

// restoreBackup puts back what commit replaced at abs, or removes what it created.
func restoreBackup(o *op) error {
	// A group's journal is removed only once its rollback is durable.
	o.e.touchedPath(o.abs, o.madeDirs)
	if o.backup != "" {
		err := os.Rename(o.backup, o.abs)
		if err == nil {
			o.backup = ""
		}
		return err
	}
	if !o.present || o.info.IsDir() {
		if err := os.Remove(o.abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if o.present && o.info.IsDir() {
		// clearForReplace removed an empty directory; make it again.
		return os.Mkdir(o.abs, o.info.Mode().Perm())
	}
	return nil
}

func dropBackup(o *op) {
	if o.backup != "" {
		os.RemoveAll(o.backup)
		o.backup = ""
	}
}

// clearForReplace removes an empty directory hostd may replace with a file or link; rename
// cannot replace a directory with anything else.
func clearForReplace(o *op) error {
	if o.info == nil || !o.info.IsDir() {
		return nil
	}
	if err := os.Remove(o.abs); err != nil {
		return err
	}
	// The directory was empty, so there is nothing to back up: undo recreates it.
	return nil
}

// commitStaged puts a staged file or link in place of its target with one rename, keeping what
// it replaces for undo. The rename is made durable with the reconcile's other changes (see
// Engine.durable), before anything claims it.
func commitStaged(o *op) error {
	if err := o.confine(); err != nil {
		return err
	}
	if err := clearForReplace(o); err != nil {
		return err
	}
	if err := keepBackup(o); err != nil {
		return err
	}
	if err := os.Rename(o.staged, o.abs); err != nil {
		return err
	}
	o.staged, o.committed = "", true
	o.e.touchedPath(o.abs, o.madeDirs)
	return nil
}
