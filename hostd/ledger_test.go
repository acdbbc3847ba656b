package hostd

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
)

func TestDriftIsPutBack(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, file("conf", "/etc/app.conf", "v1\n")))
	b.reconcile(d)

	// Same size, so only the content (through the change time) tells.
	b.write("/etc/app.conf", "v9\n", 0o644)
	r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, true)
	if !r.Drift || b.read("/etc/app.conf") != "v1\n" {
		t.Fatalf("drift %v, content %q", r.Drift, b.read("/etc/app.conf"))
	}

	os.Chmod(b.path("/etc/app.conf"), 0o666)
	if r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, true); !r.Drift || b.mode("/etc/app.conf") != 0o644 {
		t.Fatalf("drift %v, mode %o", r.Drift, b.mode("/etc/app.conf"))
	}

	os.Remove(b.path("/etc/app.conf"))
	if r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, true); !r.Drift || b.read("/etc/app.conf") != "v1\n" {
		t.Fatal("a deleted managed file is not put back as drift")
	}

	// A touched but equal file is not drift.
	now := time.Now().Add(time.Minute)
	os.Chtimes(b.path("/etc/app.conf"), now, now)
	if r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, false); r.Drift {
		t.Fatal("touching a file is drift")
	}

	// A new spec is a change, not drift.
	if r := b.reconcile(b.decl(mod("app", false, file("conf", "/etc/app.conf", "v2\n")))).want(t, "app/conf", hq.StateApplied, true, true); r.Drift {
		t.Fatal("a new spec is reported as drift")
	}
}

func TestRemovesWhatIsNoLongerDeclared(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(
		mod("app", false,
			hq.Resource{Name: "dir", Kind: hq.KindDirectory, Path: "/srv/app"},
			file("conf", "/srv/app/app.conf", "x"),
			hq.Resource{Name: "link", Kind: hq.KindSymlink, Path: "/srv/app/current", Target: "app.conf"},
			hq.Resource{Name: "kept", Kind: hq.KindDirectory, Path: "/srv/kept"},
		),
		mod("other", false, file("stays", "/srv/other.conf", "y")),
	))
	b.write("/srv/kept/foreign", "not hostd's", 0o644)

	b.reconcile(b.decl(mod("other", false, file("stays", "/srv/other.conf", "y"))))
	for _, p := range []string{"/srv/app/app.conf", "/srv/app/current", "/srv/app"} {
		if b.exists(p) {
			t.Fatalf("%s was not removed", p)
		}
	}
	if !b.exists("/srv/kept/foreign") {
		t.Fatal("a file hostd does not manage was removed with its directory")
	}
	if b.read("/srv/other.conf") != "y" {
		t.Fatal("a still declared file was touched")
	}
	for _, ref := range []string{"app/dir", "app/conf", "app/link", "app/kept"} {
		if b.eng.ledger.Resources[ref] != nil {
			t.Fatalf("%s is still in the ledger", ref)
		}
	}
}

func TestMovedResourceRemovesItsOldPath(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(mod("app", false, file("conf", "/etc/a.conf", "x"))))
	b.reconcile(b.decl(mod("app", false, file("conf", "/etc/b.conf", "x")))).want(t, "app/conf", hq.StateApplied, true, true)
	if b.exists("/etc/a.conf") || !b.exists("/etc/b.conf") {
		t.Fatal("the file did not move")
	}
}

func TestPathPassesBetweenModules(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(mod("old", false, file("conf", "/etc/shared.conf", "x"))))
	// The new owner is not taken, but what is there is hostd's: it is neither held nor removed.
	rs := b.reconcile(b.decl(mod("new", false, file("conf", "/etc/shared.conf", "y"))))
	rs.want(t, "new/conf", hq.StateApplied, true, true)
	if b.read("/etc/shared.conf") != "y" {
		t.Fatal("content not updated")
	}
}

func TestNeverTouchesUnmanaged(t *testing.T) {
	b := setup(t)
	b.write("/etc/hosts", "127.0.0.1 localhost\n", 0o644)
	b.write("/etc/app.conf", "theirs\n", 0o640)
	d := b.decl(mod("app", false, file("conf", "/etc/app.conf", "ours\n"), file("new", "/etc/new.conf", "n")))
	rs := b.reconcile(d)
	rs.want(t, "app/conf", hq.StateHeld, false, false)
	rs.want(t, "app/new", hq.StateApplied, true, true)
	if b.read("/etc/app.conf") != "theirs\n" || b.mode("/etc/app.conf") != 0o640 {
		t.Fatal("a held file was touched")
	}
	if b.eng.ledger.Resources["app/conf"] != nil {
		t.Fatal("a held file is in the ledger")
	}

	// Unassigning the module removes what hostd made, and nothing else.
	b.reconcile(b.decl())
	if b.read("/etc/app.conf") != "theirs\n" || b.read("/etc/hosts") != "127.0.0.1 localhost\n" {
		t.Fatal("removal touched a file hostd never managed")
	}
	if b.exists("/etc/new.conf") {
		t.Fatal("a managed file was not removed")
	}
}

func TestLedgerSurvivesRestart(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, file("conf", "/etc/app.conf", "x")))
	b.reconcile(d)
	b.restart()
	if g, dg := b.eng.Applied(); g != d.Generation || dg != d.Digest {
		t.Fatalf("applied %d %s after restart", g, dg)
	}
	b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, false)
	b.reconcile(b.decl())
	if b.exists("/etc/app.conf") {
		t.Fatal("a file managed before the restart was not removed after it")
	}
}

func TestStateDirUnderTheRootIsRefused(t *testing.T) {
	b := setup(t)
	b.eng.Close()
	b.state = b.path("/var/lib/hostd")
	b.open()
	b.reconcile(b.decl(mod("app", false, file("ok", "/var/lib/other.conf", "x"))))
	rs := b.reconcile(b.decl(mod("app", true,
		hq.Resource{Name: "wipe", Kind: hq.KindAbsent, Path: "/var/lib/hostd", Gate: ptr(false)},
		hq.Resource{Name: "wipe-parent", Kind: hq.KindAbsent, Path: "/var/lib", Gate: ptr(false)},
		hq.Resource{Name: "dir", Kind: hq.KindDirectory, Path: "/var/lib/hostd", Gate: ptr(false)},
		hq.Resource{Name: "link", Kind: hq.KindSymlink, Path: "/var/lib/hostd", Target: "/tmp", Gate: ptr(false)},
		hq.Resource{Name: "ledger", Kind: hq.KindFile, Path: "/var/lib/hostd/ledger.json", Content: "{}", Gate: ptr(false)},
		hq.Resource{Name: "gone", Kind: hq.KindAbsent, Path: "/var/lib/hostd/ledger.json", Gate: ptr(false)},
		file("ok", "/var/lib/other.conf", "y"),
	)))
	for _, ref := range []string{"app/wipe", "app/wipe-parent", "app/dir", "app/link", "app/ledger", "app/gone"} {
		if r := rs.want(t, ref, hq.StateFailed, true, false); !strings.Contains(r.Error, "HOSTD_STATE_DIR") {
			t.Fatalf("%s: error %q does not say why", ref, r.Error)
		}
	}
	rs.want(t, "app/ok", hq.StateApplied, true, true)
	if c := b.read("/var/lib/hostd/ledger.json"); !strings.Contains(c, "app/ok") {
		t.Fatalf("the ledger was overwritten: %q", c)
	}
}
