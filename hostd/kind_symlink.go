package hostd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/meshhq/hq"
)

// linkStep points a symlink at its target; an absolute target lives under the root too.
type linkStep struct{}

func (linkStep) target(o *op) string {
	if filepath.IsAbs(o.decl.Target) {
		return filepath.Join(o.e.cfg.Root, o.decl.Target)
	}
	return o.decl.Target
}

func (s linkStep) check(_ context.Context, o *op) error {
	if err := o.e.confiner.linkTarget(o.abs, o.decl.Target, s.target(o)); err != nil {
		return err
	}
	fi, err := os.Lstat(o.abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	o.present, o.info = true, fi
	if fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	got, err := os.Readlink(o.abs)
	if err != nil {
		return err
	}
	if got == s.target(o) {
		o.equal = true
		o.record = s.entry(o, "created")
		if o.entry != nil && o.entry.Spec == o.spec {
			o.record = o.entry
		} else if o.entry != nil {
			o.record.Wrote = o.entry.Wrote
		}
	}
	return nil
}

func (s linkStep) entry(o *op, wrote string) *Entry {
	return &Entry{Kind: hq.KindSymlink, Path: o.decl.Path, Spec: o.spec, Wrote: wrote, Target: s.target(o)}
}

func (s linkStep) stage(_ context.Context, o *op) error {
	if err := o.confine(); err != nil {
		return err
	}
	made, err := mkdirs(filepath.Dir(o.abs))
	o.madeDirs = made
	if err != nil {
		return err
	}
	tmp := tempName(o.abs, "new")
	if err := os.Symlink(s.target(o), tmp); err != nil {
		return err
	}
	o.staged = tmp
	return nil
}

func (s linkStep) commit(_ context.Context, o *op) error {
	if err := commitStaged(o); err != nil {
		return err
	}
	o.record = s.entry(o, o.wrote())
	return nil
}

func (linkStep) undo(ctx context.Context, o *op) error { return fileStep{}.undo(ctx, o) }

func (linkStep) finish(o *op) { dropBackup(o) }
