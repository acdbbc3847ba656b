package hostd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/meshhq/hq"
)

// dirStep makes a directory with its declared mode; it never removes what is inside one.
type dirStep struct{}

func (dirStep) want(o *op) uint32 { return hq.ParseMode(o.decl.Mode, 0o755) }

func (s dirStep) check(_ context.Context, o *op) error {
	fi, err := os.Lstat(o.abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	o.present, o.info = true, fi
	if fi.IsDir() && modeBits(fi.Mode()) == s.want(o) {
		o.equal = true
		o.record = s.entry(o, "created")
	}
	return nil
}

func (dirStep) entry(o *op, wrote string) *Entry {
	if o.entry != nil && o.entry.Spec == o.spec {
		return o.entry
	}
	if o.entry != nil {
		wrote = o.entry.Wrote
	}
	return &Entry{Kind: hq.KindDirectory, Path: o.decl.Path, Spec: o.spec, Wrote: wrote}
}

func (dirStep) stage(context.Context, *op) error { return nil }

func (s dirStep) commit(_ context.Context, o *op) error {
	if err := o.confine(); err != nil {
		return err
	}
	made, err := mkdirs(filepath.Dir(o.abs))
	o.madeDirs = made
	if err != nil {
		return err
	}
	if o.present && !o.info.IsDir() {
		// Something else is where the directory must be; it is hostd's to replace (managed or
		// taken), and a directory cannot be renamed over it.
		if err := keepBackup(o); err != nil {
			return err
		}
		if err := os.Remove(o.abs); err != nil {
			return err
		}
	}
	if o.present && o.info.IsDir() {
		o.prevMode = o.info.Mode()
	} else if err := os.Mkdir(o.abs, 0o700); err != nil {
		// In a group, the stage of a member inside the directory made it already: it is this
		// group's, and undo removes it as one commit made (see undo).
		fi, lerr := os.Lstat(o.abs)
		if !errors.Is(err, fs.ErrExist) || lerr != nil || !fi.IsDir() {
			return err
		}
	}
	o.committed = true
	// The directory's entry in its parent, and its own mode.
	o.e.touchedPath(o.abs, made)
	o.e.touched(o.abs)
	if err := os.Chmod(o.abs, fileMode(s.want(o))); err != nil {
		return err
	}
	o.record = &Entry{Kind: hq.KindDirectory, Path: o.decl.Path, Spec: o.spec, Wrote: o.wrote()}
	return nil
}

// undo puts back the mode of a directory that was there, or removes the one commit made. That
// one may be gone already, or not empty yet, when another member of the group made it in its
// stage: that member's undo removes it with its madeDirs, after removing what it put inside.
func (dirStep) undo(_ context.Context, o *op) error {
	var err error
	if o.committed {
		o.e.touchedPath(o.abs, o.madeDirs)
		if o.present && o.info.IsDir() {
			err = os.Chmod(o.abs, o.prevMode)
		} else {
			err = os.Remove(o.abs)
			if errors.Is(err, fs.ErrNotExist) || o.backup == "" && isNotEmpty(err) {
				err = nil
			}
			if o.backup != "" {
				err = errors.Join(err, os.Rename(o.backup, o.abs))
				o.backup = ""
			}
		}
		o.committed = false
	}
	removeDirs(o.madeDirs)
	return err
}

func (dirStep) finish(o *op) { dropBackup(o) }

// isNotEmpty reports whether err is the error removing a directory that is not empty.
func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
