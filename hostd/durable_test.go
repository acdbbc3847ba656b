package hostd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// manyFiles declares n files in 10 directories (declared first, as bench/peers does), with a
// content and a mode of their own; the count is above syncEachMax, so they are made durable
// with syncfs.
func manyFiles(n int) []hq.Resource {
	var rs []hq.Resource
	for d := range 10 {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("d%d", d), Kind: hq.KindDirectory, Path: fmt.Sprintf("/srv/d%d", d), Mode: "0750"})
	}
	for i := range n {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("f%d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/srv/d%d/f%d.conf", i%10, i),
			Content: fmt.Sprintf("setting_%d = %s\n", i, strings.Repeat("x", i%7)), Mode: []string{"0644", "0600", "0640"}[i%3]})
	}
	return rs
}

// checkFiles fails unless every file of rs is in place with its content and mode, and no name
// hostd stages under is left in any of their directories.
func checkFiles(b *bed, rs []hq.Resource) {
	b.t.Helper()
	dirs := map[string]bool{}
	for _, r := range rs {
		if r.Kind != hq.KindFile {
			continue
		}
		dirs[filepath.Dir(r.Path)] = true
		if got := b.read(r.Path); got != r.Content {
			b.t.Fatalf("%s holds %q, want %q", r.Path, got, r.Content)
		}
		if got, want := b.mode(r.Path), fileMode(hq.ParseMode(r.Mode, 0o644)); got != want {
			b.t.Fatalf("%s has mode %v, want %v", r.Path, got, want)
		}
	}
	for d := range dirs {
		b.noLitter(d)
	}
}

func TestManyFilesAreWholeInPlace(t *testing.T) {
	b := setup(t)
	rs := manyFiles(300)
	res := b.reconcile(b.decl(mod("app", true, rs...)))
	for _, r := range rs {
		res.want(t, "app/"+r.Name, hq.StateApplied, true, true)
	}
	checkFiles(b, rs)
	if got := b.mode("/srv/d3"); got != 0o750 {
		t.Fatalf("/srv/d3 has mode %v", got)
	}

	// Every file changed at once: replaced in place, the originals' undo links gone too.
	for i := range rs {
		if rs[i].Kind == hq.KindFile {
			rs[i].Content += "changed\n"
		}
	}
	res = b.reconcile(b.decl(mod("app", true, rs...)))
	for _, r := range rs {
		res.want(t, "app/"+r.Name, hq.StateApplied, true, r.Kind == hq.KindFile)
	}
	checkFiles(b, rs)

	// The ledger names them all, with what they hold.
	b.restart()
	res = b.reconcile(b.decl(mod("app", true, rs...)))
	for _, r := range rs {
		res.want(t, "app/"+r.Name, hq.StateApplied, true, false)
	}
}

// TestFewFilesAreWholeInPlace: a change of fewer files than syncEachMax is made durable one
// fsync each, through the same steps.
func TestFewFilesAreWholeInPlace(t *testing.T) {
	b := setup(t)
	var rs []hq.Resource
	for i := range syncEachMax - 1 {
		rs = append(rs, hq.Resource{Name: fmt.Sprintf("f%d", i), Kind: hq.KindFile, Path: fmt.Sprintf("/etc/app/f%d", i), Content: fmt.Sprint(i), Mode: "0600"})
	}
	res := b.reconcile(b.decl(mod("app", true, rs...)))
	for _, r := range rs {
		res.want(t, "app/"+r.Name, hq.StateApplied, true, true)
	}
	checkFiles(b, rs)
}

// TestBatchedFilesAreInPlaceForWhatFollows: files are committed in batches, but a resource of
// another kind, a validate command and a gate file each find every file declared before them in
// place.
func TestBatchedFilesAreInPlaceForWhatFollows(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", true,
		file("a", "/etc/app/a.conf", "A\n"),
		file("b", "/etc/app/b.conf", "B\n"),
		hq.Resource{Name: "copy", Kind: hq.KindAction, Command: []string{"/bin/sh", "-c", "cat {root}/etc/app/a.conf {root}/etc/app/b.conf > {root}/copied"}},
		file("c", "/etc/app/c.conf", "C\n"),
		hq.Resource{Name: "checked", Kind: hq.KindFile, Path: "/etc/app/d.conf", Content: "D\n",
			Validate: []string{"/bin/sh", "-c", "grep -q C {root}/etc/app/c.conf"}},
		file("e", "/etc/app/e.conf", "E\n"),
		hq.Resource{Name: "gate", Kind: hq.KindFile, Path: "/etc/app/gate.conf", Content: "G\n", Gate: ptr(true)},
		hq.Resource{Name: "after", Kind: hq.KindAction, Command: []string{"/bin/sh", "-c", "cat {root}/etc/app/e.conf {root}/etc/app/gate.conf > {root}/after"}},
	))
	res := b.reconcile(d)
	for _, n := range []string{"a", "b", "copy", "c", "checked", "e", "gate", "after"} {
		res.want(t, "app/"+n, hq.StateApplied, true, true)
	}
	if got := b.read("/copied"); got != "A\nB\n" {
		t.Fatalf("the action found %q", got)
	}
	if got := b.read("/after"); got != "E\nG\n" {
		t.Fatalf("the action after the gate found %q", got)
	}
	b.noLitter("/etc/app")
}

// TestBatchedFileThatCannotCommitFailsAlone: one file of a batch whose rename fails (a directory
// with something in it is where it goes) fails; the others of the batch apply.
func TestBatchedFileThatCannotCommitFailsAlone(t *testing.T) {
	b := setup(t)
	b.write("/etc/app/busy/inside", "x", 0o644)
	d := b.decl(mod("app", true,
		file("a", "/etc/app/a.conf", "A\n"),
		file("busy", "/etc/app/busy", "B\n"),
		file("c", "/etc/app/c.conf", "C\n"),
	))
	res := b.reconcile(d)
	res.want(t, "app/a", hq.StateApplied, true, true)
	res.want(t, "app/busy", hq.StateFailed, true, false)
	res.want(t, "app/c", hq.StateApplied, true, true)
	if b.read("/etc/app/a.conf") != "A\n" || b.read("/etc/app/c.conf") != "C\n" || b.read("/etc/app/busy/inside") != "x" {
		t.Fatal("the files around the one that failed are not as declared")
	}
	b.noLitter("/etc/app")
}

// TestNotDurableIsNotApplied: when what a reconcile changed cannot be made durable, its results
// say failed, not applied, and the ledger keeps no fingerprint that would spare the next check
// from reading the files.
func TestNotDurableIsNotApplied(t *testing.T) {
	for _, n := range []int{1, syncEachMax + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := setup(t)
			var rs []hq.Resource
			for i := range n {
				rs = append(rs, file(fmt.Sprintf("f%d", i), fmt.Sprintf("/etc/app/f%d", i), "x\n"))
			}
			b.reconcile(b.decl(mod("app", true, file("before", "/etc/before", "old\n"))))
			defer func(prev func([]string, *fsWatch) error) { syncPaths = prev }(syncPaths)
			// The staged files sync; the directories after the renames do not.
			syncPaths = func(names []string, w *fsWatch) error {
				for _, name := range names {
					if fi, err := os.Stat(name); err == nil && fi.IsDir() {
						return errors.New("injected writeback error")
					}
				}
				return syncPathsOS(names, w)
			}
			res := b.reconcile(b.decl(mod("app", true, append(rs, file("before", "/etc/before", "new\n"))...)))
			for _, r := range rs {
				if got := res.want(t, "app/"+r.Name, hq.StateFailed, true, false); !strings.Contains(got.Error, "not made durable: injected") {
					t.Fatalf("%s: %q", r.Name, got.Error)
				}
				if en := b.eng.ledger.Resources["app/"+r.Name]; en == nil || en.Stat != nil {
					t.Fatalf("%s: ledger entry %+v", r.Name, en)
				}
			}
			res.want(t, "app/before", hq.StateFailed, true, false)
			syncPaths = syncPathsOS
			// The next reconcile reads them, finds them as declared, and applies.
			res = b.reconcile(b.decl(mod("app", true, append(rs, file("before", "/etc/before", "new\n"))...)))
			for _, r := range rs {
				res.want(t, "app/"+r.Name, hq.StateApplied, true, false)
			}
			res.want(t, "app/before", hq.StateApplied, true, false)
		})
	}
}

// TestStagedFilesNotDurableAreNotPutInPlace: when the staged files cannot be made durable,
// none of them is renamed to its name.
func TestStagedFilesNotDurableAreNotPutInPlace(t *testing.T) {
	for _, n := range []int{1, syncEachMax + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b := setup(t)
			b.write("/etc/app/f0", "old\n", 0o644)
			var rs []hq.Resource
			for i := range n {
				rs = append(rs, file(fmt.Sprintf("f%d", i), fmt.Sprintf("/etc/app/f%d", i), "new\n"))
			}
			defer func(prev func([]string, *fsWatch) error) { syncPaths = prev }(syncPaths)
			syncPaths = func(names []string, w *fsWatch) error {
				for _, name := range names {
					if strings.HasPrefix(filepath.Base(name), ".hostd-new-") {
						return errors.New("injected writeback error")
					}
				}
				return syncPathsOS(names, w)
			}
			res := b.reconcile(b.decl(mod("app", true, rs...)))
			for _, r := range rs {
				res.want(t, "app/"+r.Name, hq.StateFailed, true, false)
			}
			if got := b.read("/etc/app/f0"); got != "old\n" {
				t.Fatalf("f0 holds %q", got)
			}
			for i := 1; i < n; i++ {
				if b.exists(fmt.Sprintf("/etc/app/f%d", i)) {
					t.Fatalf("f%d was put in place", i)
				}
			}
			b.noLitter("/etc/app")
		})
	}
}

// TestApplyRemovesLitterOfAnInterruptedFirstApply: a crash during a first hostd apply leaves
// staged files beside paths the ledger does not name yet; the next apply removes them.
func TestApplyRemovesLitterOfAnInterruptedFirstApply(t *testing.T) {
	root, state := t.TempDir(), t.TempDir()
	rs := []hq.Resource{file("a", "/etc/app/a.conf", "A\n")}
	body, err := json.Marshal(map[string]any{"resources": rs})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "app.json")
	if err := os.WriteFile(name, body, 0o600); err != nil {
		t.Fatal(err)
	}
	litter := filepath.Join(root, "etc/app/.hostd-new-0123456789ab-b.conf")
	if err := os.MkdirAll(filepath.Dir(litter), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(litter, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := Apply(context.Background(), ApplyConfig{Root: root, StateDir: state, File: name, Take: true})
	if err != nil || a.ExitCode() != 2 {
		t.Fatalf("%v, exit %d", err, a.ExitCode())
	}
	if _, err := os.Lstat(litter); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the litter is still there: %v", err)
	}
}
