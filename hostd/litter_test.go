package hostd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshhq/hq"
)

// TestLitterOfACrashIsRemovedAtStart: a crash while staging (before a group's journal is
// written, or after it is removed) leaves hostd's temporary files beside their targets. The
// next start removes them from the directories of what hostd manages or is declared, and
// nothing else.
func TestLitterOfACrashIsRemovedAtStart(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, file("conf", "/etc/app/conf", "v1"),
		hq.Resource{Name: "link", Kind: hq.KindSymlink, Path: "/etc/app/link", Target: "/etc/app/conf"}))
	b.reconcile(d)
	// A declaration kept on disk that names a path not applied yet.
	next := b.decl(append(d.Modules, mod("web", false, file("new", "/etc/web/site.conf", "v1")))...)
	if err := writeJSONAtomic(filepath.Join(b.state, declarationFile), next); err != nil {
		t.Fatal(err)
	}

	var litter []string
	for _, p := range []string{"/etc/app/conf", "/etc/app/link", "/etc/web/site.conf"} {
		for _, what := range []string{"new", "undo"} {
			litter = append(litter, tempName(b.path(p), what))
		}
	}
	b.write("/etc/web/keep", "keep", 0o644)
	for _, name := range litter {
		if err := os.WriteFile(name, []byte("staged"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	staged := tempName(b.path("/etc/app/link"), "new")
	if err := os.Symlink("conf", staged); err != nil {
		t.Fatal(err)
	}
	litter = append(litter, staged)
	// Names that are not quite hostd's, a directory, and litter where hostd manages nothing.
	kept := []string{"/etc/app/.hostd-new-conf", "/etc/app/.hostd-newer-0123456789ab-conf",
		"/etc/app/hostd-new-0123456789ab-conf", "/etc/app/.hostd-new-0123456789ab-",
		"/etc/app/.hostd-new-0123456789AB-conf", "/etc/app/.hostd-gone-0123456789ab-conf",
		"/srv/.hostd-new-0123456789ab-x"}
	for _, p := range kept {
		b.write(p, "theirs", 0o644)
	}
	if err := os.Mkdir(b.path("/etc/app/.hostd-new-0123456789ab-dir"), 0o755); err != nil {
		t.Fatal(err)
	}

	b.restart()
	for _, name := range litter {
		if _, err := os.Lstat(name); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", name, err)
		}
	}
	for _, p := range append(kept, "/etc/app/.hostd-new-0123456789ab-dir", "/etc/web/keep") {
		if !b.exists(p) {
			t.Errorf("%s was removed", p)
		}
	}
	if got := b.read("/etc/app/conf"); got != "v1" {
		t.Fatalf("the managed file holds %q", got)
	}
	if got, err := os.Readlink(b.path("/etc/app/link")); err != nil || got != b.path("/etc/app/conf") {
		t.Fatalf("the managed link points at %q (%v)", got, err)
	}
	b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, false)
}
