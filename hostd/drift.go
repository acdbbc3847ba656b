package hostd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/meshhq/hq"
)

// seenDrift is what something else changed on the machine for a resource: detail, short and
// plain, for hq.Result.DriftDetail ("content sha256:ab12… (want sha256:cd34…)", "mode 0600
// (want 0644)", "target /a (want /b)", "missing", "a directory where a file was declared",
// "service not running"), and found, for hq.Result.DriftFound, the content found in a file when
// it and the declared content are small text.
type seenDrift struct {
	detail, found string
}

// drift says what something else changed on the machine for o, checked and found not as
// declared, when that is drift (see drifted); the zero seenDrift when it is not. It must run
// before the change is committed: it looks at what is there.
func (o *op) drift() seenDrift {
	if !o.drifted() {
		return seenDrift{}
	}
	d := seenDrift{detail: o.driftDetail(), found: o.driftFound()}
	if d.detail == "" {
		d.detail = "changed" // not found as declared, but nothing this can name
	}
	return d
}

// driftFound is the content of o's drifted file when it differs from the declared content and
// both are small text (at most hq.MaxDriftFound bytes, UTF-8 without NUL); "" otherwise.
func (o *op) driftFound() string {
	if o.decl.Kind != hq.KindFile {
		return ""
	}
	if o.usesSecretContent() {
		return "" // what was found there may be the secret, or be near it
	}
	want, err := o.content()
	if err != nil || len(want) > hq.MaxDriftFound || !smallText(want) {
		return ""
	}
	got, omitted, ok := o.readFound()
	if !ok || omitted != "" || bytes.Equal(got, want) {
		return ""
	}
	return string(got)
}

// heldFound says what o's held file holds, which Take would overwrite, with at most budget
// bytes of its content: the content when it is small text, else why it is left out. nil when
// o is not a file found as a regular file (a directory where a file is declared: its hold
// reason says so).
func (o *op) heldFound(budget int) *hq.FoundFile {
	if o.decl.Kind != hq.KindFile {
		return nil
	}
	got, omitted, ok := o.readFound()
	switch {
	case !ok:
		return nil
	case omitted != "":
		return &hq.FoundFile{Omitted: omitted}
	case len(got) > budget:
		return &hq.FoundFile{Omitted: hq.FoundTooMany}
	}
	return &hq.FoundFile{Text: string(got)}
}

// readFound reads o's file as found, a regular file: its content when it is small text (at
// most hq.MaxDriftFound bytes, UTF-8 without NUL), else why not (hq.FoundTooLarge,
// hq.FoundBinary). ok is false when it is not a regular file or cannot be read. A file larger
// than the bound by its size is not read.
func (o *op) readFound() (got []byte, omitted string, ok bool) {
	if !o.present || o.info == nil || !o.info.Mode().IsRegular() {
		return nil, "", false
	}
	if o.info.Size() > hq.MaxDriftFound {
		return nil, hq.FoundTooLarge, true
	}
	got, err := os.ReadFile(o.abs)
	switch {
	case err != nil:
		return nil, "", false
	case len(got) > hq.MaxDriftFound: // grown since it was checked
		return nil, hq.FoundTooLarge, true
	case !smallText(got):
		return nil, hq.FoundBinary, true
	}
	return got, "", true
}

// smallText reports whether b reads as text: UTF-8 without NUL.
func smallText(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}

func (o *op) driftDetail() string {
	switch o.decl.Kind {
	case hq.KindService:
		if o.unhealthy != nil {
			return o.unhealthy.Error()
		}
		return "service not running"
	case hq.KindPackage:
		return o.packageDrift()
	case hq.KindContainer:
		return "container " + o.ctr.drift
	case hq.KindAbsent:
		if o.info == nil {
			return ""
		}
		return kindNoun(o.info.Mode()) + " (want absent)"
	}
	if !o.present || o.info == nil {
		return "missing"
	}
	want := map[string]fs.FileMode{hq.KindFile: 0, hq.KindDirectory: fs.ModeDir, hq.KindSymlink: fs.ModeSymlink}[o.decl.Kind]
	if got := o.info.Mode().Type(); got != want {
		return kindNoun(got) + " where " + kindNoun(want) + " was declared"
	}
	var diffs []string
	switch o.decl.Kind {
	case hq.KindFile:
		if content, err := o.content(); err == nil {
			if got, err := hashFile(o.abs); err == nil && got != contentHash(content) {
				if o.usesSecretContent() {
					// A digest of a low-entropy secret could be guessed: only that it changed.
					diffs = append(diffs, "secret content changed")
				} else {
					diffs = append(diffs, fmt.Sprintf("content %s (want %s)", shortHash(got), shortHash(contentHash(content))))
				}
			}
		}
		diffs = append(diffs, modeDiff(o.info.Mode(), hq.ParseMode(o.decl.Mode, 0o644))...)
	case hq.KindDirectory:
		diffs = append(diffs, modeDiff(o.info.Mode(), dirStep{}.want(o))...)
	case hq.KindSymlink:
		if got, err := os.Readlink(o.abs); err == nil {
			diffs = append(diffs, fmt.Sprintf("target %s (want %s)", o.declaredTarget(got), o.decl.Target))
		}
	}
	return strings.Join(diffs, ", ")
}

// modeDiff names a mode that is not the one declared.
func modeDiff(got fs.FileMode, want uint32) []string {
	if modeBits(got) == want {
		return nil
	}
	return []string{fmt.Sprintf("mode %04o (want %04o)", modeBits(got), want)}
}

// declaredTarget is a link target as read from the machine, written the way a declaration
// names it: an absolute one under the root without the root.
func (o *op) declaredTarget(got string) string {
	root := filepath.Clean(o.e.cfg.Root)
	if root == "/" || !filepath.IsAbs(got) {
		return got
	}
	if rest, ok := strings.CutPrefix(got, root); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return got
}

// kindNoun names what a file of type t is, with its article.
func kindNoun(t fs.FileMode) string {
	switch t.Type() {
	case 0:
		return "a file"
	case fs.ModeDir:
		return "a directory"
	case fs.ModeSymlink:
		return "a symlink"
	case fs.ModeNamedPipe:
		return "a named pipe"
	case fs.ModeSocket:
		return "a socket"
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		return "a device"
	}
	return "something else"
}

// shortHash keeps "sha256:" and the first 12 hex digits of a content hash.
func shortHash(h string) string {
	if len(h) <= len("sha256:")+12 {
		return h
	}
	return h[:len("sha256:")+12] + "…"
}

// hashFile is the content hash of the file at name, read as a stream: it may be large.
func hashFile(name string) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
