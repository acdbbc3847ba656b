package hostd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// outside makes a directory beside the root, where nothing hostd does may reach.
func (b *bed) outside() string {
	b.t.Helper()
	dir := filepath.Join(filepath.Dir(b.root), "outside")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	return dir
}

// untouched fails if dir holds anything but the names given.
func untouched(t *testing.T, dir string, want ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("outside the root: %v, want %v", got, want)
	}
}

func wantOutside(t *testing.T, rs results, ref string) {
	t.Helper()
	if r := rs.want(t, ref, hq.StateFailed, true, false); !strings.Contains(r.Error, "resolves outside HOSTD_ROOT") {
		t.Fatalf("%s's error %q", ref, r.Error)
	} else {
		t.Logf("%s: %s", ref, r.Error)
	}
}

func TestDeclaredSymlinkCannotLeadOutsideTheRoot(t *testing.T) {
	b := setup(t)
	out := b.outside()
	// From /opt, ../../outside is the directory beside the root.
	rs := b.reconcile(b.decl(mod("app", true,
		hq.Resource{Name: "esc", Kind: hq.KindSymlink, Path: "/opt/esc", Target: "../../outside"},
		file("pwned", "/opt/esc/pwned", "x"),
		hq.Resource{Name: "abs", Kind: hq.KindSymlink, Path: "/opt/abs", Target: "/../outside"},
		hq.Resource{Name: "in", Kind: hq.KindSymlink, Path: "/opt/in", Target: "../etc"},
	)))
	wantOutside(t, rs, "app/esc")
	wantOutside(t, rs, "app/abs")
	rs.want(t, "app/in", hq.StateApplied, true, true)
	untouched(t, out)
	if fi, err := os.Lstat(b.path("/opt/esc")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		t.Fatal("the escaping link was made")
	}

	// The same in a group: nothing of it applies.
	b2 := setup(t)
	out = b2.outside()
	rs = b2.reconcile(b2.decl(mod("app", true,
		hq.Resource{Name: "esc", Kind: hq.KindSymlink, Path: "/opt/esc", Target: "../../outside", Group: "g"},
		hq.Resource{Name: "pwned", Kind: hq.KindFile, Path: "/opt/esc/pwned", Content: "x", Group: "g"},
	)))
	wantOutside(t, rs, "app/esc")
	rs.want(t, "app/pwned", hq.StateGroupedPending, true, false)
	untouched(t, out)
}

func TestSymlinkOnTheMachineCannotLeadOutsideTheRoot(t *testing.T) {
	b := setup(t)
	out := b.outside()
	b.write(filepath.Join("..", "outside", "victim"), "theirs", 0o644)
	if err := os.Symlink(out, b.path("/etc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", b.path("/var")); err != nil {
		t.Fatal(err)
	}
	rs := b.reconcile(b.decl(mod("app", true,
		file("conf", "/etc/app.conf", "x"),
		file("deep", "/etc/new/deeper/app.conf", "x"),
		hq.Resource{Name: "dir", Kind: hq.KindDirectory, Path: "/var/made"},
		hq.Resource{Name: "link", Kind: hq.KindSymlink, Path: "/var/link", Target: "/etc"},
		hq.Resource{Name: "victim", Kind: hq.KindAbsent, Path: "/var/victim"},
	)))
	for _, ref := range []string{"app/conf", "app/deep", "app/dir", "app/link", "app/victim"} {
		wantOutside(t, rs, ref)
	}
	untouched(t, out, "victim")
}

func TestRemovalCannotReachOutsideTheRoot(t *testing.T) {
	b := setup(t)
	out := b.outside()
	b.reconcile(b.decl(mod("app", false, file("f", "/srv/x/f", "ours")))).want(t, "app/f", hq.StateApplied, true, true)
	// Something else swaps the directory for a link to a place that has an f of its own.
	b.write(filepath.Join("..", "outside", "f"), "theirs", 0o644)
	if err := os.RemoveAll(b.path("/srv/x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, b.path("/srv/x")); err != nil {
		t.Fatal(err)
	}
	b.reconcile(b.decl())
	untouched(t, out, "f")
	if b.eng.ledger.Resources["app/f"] == nil {
		t.Fatal("a removal that was refused dropped the ledger entry")
	}
}

func TestSymlinksInsideTheRootAreFollowed(t *testing.T) {
	b := setup(t)
	// The root itself reached through a link, and a parent that is a link within the root.
	real := b.root
	b.eng.Close()
	b.root = filepath.Join(t.TempDir(), "root-link")
	if err := os.Symlink(real, b.root); err != nil {
		t.Fatal(err)
	}
	b.open()
	if err := os.MkdirAll(b.path("/private/etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("private/etc", b.path("/etc")); err != nil {
		t.Fatal(err)
	}
	d := b.decl(mod("app", true, file("conf", "/etc/app/app.conf", "x"),
		hq.Resource{Name: "gone", Kind: hq.KindAbsent, Path: "/etc/old"}))
	b.write("/private/etc/old", "old", 0o644)
	rs := b.reconcile(d)
	rs.want(t, "app/conf", hq.StateApplied, true, true)
	rs.want(t, "app/gone", hq.StateApplied, true, true)
	if b.read("/private/etc/app/app.conf") != "x" || b.exists("/private/etc/old") {
		t.Fatal("a path through a link within the root was not applied")
	}
	b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, false)
}
