package hostd

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/meshhq/hq"
)

// fileStep writes a file through a validated temp file beside it, so the target is only ever
// the old content or the new, validated one.
type fileStep struct{}

func fileContent(r hq.Resource) ([]byte, error) {
	if r.ContentBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(r.ContentBase64)
		if err != nil {
			return nil, fmt.Errorf("content_base64: %w", err)
		}
		return b, nil
	}
	return []byte(r.Content), nil
}

func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (fileStep) check(_ context.Context, o *op) error {
	fi, err := os.Lstat(o.abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	o.present, o.info = true, fi
	if !fi.Mode().IsRegular() {
		return nil
	}
	fp := fingerprintOf(fi)
	// Fast path: the spec did not change and stat says nobody wrote the file since hostd last
	// looked, so its content is what the ledger says without reading it.
	if o.entry != nil && o.entry.Spec == o.spec && o.entry.Stat.equal(fp) {
		o.equal, o.record = true, o.entry
		return nil
	}
	want, err := o.content()
	if err != nil {
		return err
	}
	if modeBits(fi.Mode()) != hq.ParseMode(o.decl.Mode, 0o644) || fi.Size() != int64(len(want)) {
		return nil
	}
	got, err := os.ReadFile(o.abs)
	if err != nil {
		return err
	}
	if bytes.Equal(got, want) {
		o.equal = true
		o.record = &Entry{Kind: hq.KindFile, Path: o.decl.Path, Spec: o.spec, Wrote: "created",
			Content: contentHash(want), Stat: fp}
		if o.entry != nil {
			o.record.Wrote = o.entry.Wrote
		}
	}
	return nil
}

func (fileStep) stage(ctx context.Context, o *op) error {
	content, err := o.content()
	if err != nil {
		return err
	}
	if err := o.confine(); err != nil {
		return err
	}
	made, err := mkdirs(filepath.Dir(o.abs))
	o.madeDirs = made
	if err != nil {
		return err
	}
	if err := o.e.watch.watch(filepath.Dir(o.abs)); err != nil {
		return err
	}
	tmp := tempName(o.abs, "new")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	// Not fsync'd here: the files staged together are made durable together before the first
	// of them is renamed (see durable.go).
	o.staged, o.stagedUnsynced = tmp, true
	_, err = f.Write(content)
	if err == nil {
		// Chmod, not the create mode: the umask must not change the declared mode.
		err = f.Chmod(fileMode(hq.ParseMode(o.decl.Mode, 0o644)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(o.decl.Validate) > 0 {
		args := substitute(o.decl.Validate, o.e.cfg.Root, tmp)
		if err := runCommand(ctx, o.e.cfg.CommandTimeout, o.e.cfg.Root, args); err != nil {
			return fmt.Errorf("validate: %w", err)
		}
	}
	return nil
}

func (fileStep) commit(_ context.Context, o *op) error {
	if err := o.e.syncStaged([]*op{o}); err != nil {
		return err
	}
	if err := commitStaged(o); err != nil {
		return err
	}
	fi, err := os.Lstat(o.abs)
	if err != nil {
		return err
	}
	content, _ := o.content()
	o.record = &Entry{Kind: hq.KindFile, Path: o.decl.Path, Spec: o.spec, Wrote: o.wrote(),
		Content: contentHash(content), Stat: fingerprintOf(fi)}
	return nil
}

func (fileStep) undo(_ context.Context, o *op) error {
	var err error
	if o.staged != "" {
		err = os.Remove(o.staged)
		o.staged, o.stagedUnsynced = "", false
	}
	if o.committed {
		err = errors.Join(err, restoreBackup(o))
		o.committed = false
	}
	removeDirs(o.madeDirs)
	return err
}

func (fileStep) finish(o *op) { dropBackup(o) }
