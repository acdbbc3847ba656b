package hostd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/meshhq/hq"
)

// absentStep removes a path. Commit only renames it aside; finish deletes it, so undo can
// still put it back.
type absentStep struct{}

func (absentStep) check(_ context.Context, o *op) error {
	fi, err := os.Lstat(o.abs)
	if errors.Is(err, fs.ErrNotExist) {
		o.equal = true
		o.record = absentEntry(o, "created")
		return nil
	}
	if err != nil {
		return err
	}
	o.present, o.info = true, fi
	return nil
}

func absentEntry(o *op, wrote string) *Entry {
	if o.entry != nil && o.entry.Spec == o.spec {
		return o.entry
	}
	return &Entry{Kind: hq.KindAbsent, Path: o.decl.Path, Spec: o.spec, Wrote: wrote}
}

func (absentStep) stage(context.Context, *op) error { return nil }

func (absentStep) commit(_ context.Context, o *op) error {
	if err := o.confine(); err != nil {
		return err
	}
	b := o.aside
	if b == "" {
		b = tempName(o.abs, "gone")
	}
	if err := os.Rename(o.abs, b); err != nil {
		return err
	}
	o.e.touched(filepath.Dir(o.abs))
	o.backup, o.committed = b, true
	o.record = absentEntry(o, "removed")
	return nil
}

func (absentStep) undo(_ context.Context, o *op) error {
	if !o.committed || o.backup == "" {
		return nil
	}
	err := os.Rename(o.backup, o.abs)
	o.e.touched(filepath.Dir(o.abs))
	o.backup, o.committed = "", false
	return err
}

func (absentStep) finish(o *op) { dropBackup(o) }
