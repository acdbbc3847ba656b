package hostd

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/meshhq/hq"
)

// wantDrift reconciles d and checks that ref was put back as drift, with detail.
func (b *bed) wantDrift(d *hq.Declaration, ref, detail string) {
	b.t.Helper()
	r := b.reconcile(d).want(b.t, ref, hq.StateApplied, true, true)
	if !r.Drift || r.DriftDetail != detail {
		b.t.Fatalf("%s: drift %v, detail %q; want drift, detail %q", ref, r.Drift, r.DriftDetail, detail)
	}
}

func short(content string) string { return shortHash(contentHash([]byte(content))) }

func TestDriftDetailOfAFile(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, file("conf", "/etc/app.conf", "v1\n")))
	if r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, true); r.Drift || r.DriftDetail != "" {
		t.Fatalf("a first write is drift: %+v", r)
	}
	if r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, false); r.DriftDetail != "" {
		t.Fatalf("no drift, detail %q", r.DriftDetail)
	}

	b.write("/etc/app.conf", "v2\n", 0o644)
	b.wantDrift(d, "app/conf", "content "+short("v2\n")+" (want "+short("v1\n")+")")
	if got := short("v2\n"); !strings.HasPrefix(got, "sha256:") || len(got) != len("sha256:")+12+len("…") {
		t.Fatalf("short hash %q", got)
	}

	os.Chmod(b.path("/etc/app.conf"), 0o600)
	b.wantDrift(d, "app/conf", "mode 0600 (want 0644)")

	b.write("/etc/app.conf", "edited by hand\n", 0o640)
	b.wantDrift(d, "app/conf", "content "+short("edited by hand\n")+" (want "+short("v1\n")+"), mode 0640 (want 0644)")

	os.Remove(b.path("/etc/app.conf"))
	b.wantDrift(d, "app/conf", "missing")

	os.Remove(b.path("/etc/app.conf"))
	os.Mkdir(b.path("/etc/app.conf"), 0o755)
	b.wantDrift(d, "app/conf", "a directory where a file was declared")

	os.Remove(b.path("/etc/app.conf"))
	os.Symlink("/elsewhere", b.path("/etc/app.conf"))
	b.wantDrift(d, "app/conf", "a symlink where a file was declared")
	if b.read("/etc/app.conf") != "v1\n" {
		t.Fatal("not put back")
	}
}

func TestDriftDetailOfADirectory(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, hq.Resource{Name: "dir", Kind: hq.KindDirectory, Path: "/srv/app"}))
	b.reconcile(d).want(t, "app/dir", hq.StateApplied, true, true)

	os.Chmod(b.path("/srv/app"), 0o700)
	b.wantDrift(d, "app/dir", "mode 0700 (want 0755)")

	os.Remove(b.path("/srv/app"))
	b.wantDrift(d, "app/dir", "missing")

	os.Remove(b.path("/srv/app"))
	b.write("/srv/app", "x", 0o644)
	b.wantDrift(d, "app/dir", "a file where a directory was declared")
}

func TestDriftDetailOfASymlink(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, hq.Resource{Name: "current", Kind: hq.KindSymlink, Path: "/srv/current", Target: "/srv/v1"}))
	b.reconcile(d).want(t, "app/current", hq.StateApplied, true, true)

	os.Remove(b.path("/srv/current"))
	os.Symlink(b.path("/srv/v0"), b.path("/srv/current"))
	b.wantDrift(d, "app/current", "target /srv/v0 (want /srv/v1)")

	os.Remove(b.path("/srv/current"))
	os.Symlink("v0", b.path("/srv/current"))
	b.wantDrift(d, "app/current", "target v0 (want /srv/v1)")

	os.Remove(b.path("/srv/current"))
	b.wantDrift(d, "app/current", "missing")
}

func TestDriftDetailOfAnAbsentPath(t *testing.T) {
	b := setup(t)
	// Taken: what hostd found absent for a module that is not taken is not its to keep so.
	d := b.decl(mod("app", true, hq.Resource{Name: "gone", Kind: hq.KindAbsent, Path: "/etc/legacy.conf"}))
	b.reconcile(d).want(t, "app/gone", hq.StateApplied, true, false)
	b.write("/etc/legacy.conf", "back\n", 0o644)
	b.wantDrift(d, "app/gone", "a file (want absent)")
	if b.exists("/etc/legacy.conf") {
		t.Fatal("not removed")
	}
}

func TestDriftDetailOfAService(t *testing.T) {
	b := setup(t)
	web, health := b.hungWeb()
	d := b.decl(mod("app", false, web))
	b.reconcile(d).want(t, "app/web", hq.StateApplied, true, true)
	pid := b.pidOf("web")

	os.Remove(b.path("/web.pid"))
	syscall.Kill(pid, syscall.SIGKILL)
	b.waitDead(pid)
	b.wantDrift(d, "app/web", "service not running")
	pid = b.pidOf("web")

	health.pid.Store(int64(pid))
	os.Remove(b.path("/web.pid"))
	b.wantDrift(d, "app/web", "unhealthy: GET "+health.url+": 500 Internal Server Error")
	b.waitDead(pid)
}

func TestDriftDetailOfAGroupMember(t *testing.T) {
	b := setup(t)
	d := b.decl(pair("A1\n", "B1\n"))
	b.reconcile(d).want(t, "app/a", hq.StateApplied, true, true)
	b.write("/etc/pair/b.conf", "B0\n", 0o644)
	rs := b.reconcile(d)
	if r := rs.want(t, "app/a", hq.StateApplied, true, false); r.Drift || r.DriftDetail != "" {
		t.Fatalf("an untouched member: %+v", r)
	}
	if r := rs.want(t, "app/b", hq.StateApplied, true, true); !r.Drift || r.DriftDetail != "content "+short("B0\n")+" (want "+short("B1\n")+")" {
		t.Fatalf("the member changed by hand: drift %v, detail %q", r.Drift, r.DriftDetail)
	}
}

// TestNoDriftDetailForANewSpec: a change the declaration asks for is not drift, and says nothing.
func TestNoDriftDetailForANewSpec(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(mod("app", false, file("conf", "/etc/app.conf", "v1\n"))))
	r := b.reconcile(b.decl(mod("app", false, file("conf", "/etc/app.conf", "v2\n")))).want(t, "app/conf", hq.StateApplied, true, true)
	if r.Drift || r.DriftDetail != "" {
		t.Fatalf("a new spec: drift %v, detail %q", r.Drift, r.DriftDetail)
	}
}

// A drifted small text file's report carries what was found there; a mode change, a binary or
// a large file, and a missing one carry nothing found.
func TestDriftCarriesWhatASmallTextFileHeld(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false, file("conf", "/etc/app.conf", "port 80\n")))
	b.reconcile(d)
	found := func(content string, mode os.FileMode) string {
		t.Helper()
		b.write("/etc/app.conf", content, mode)
		r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, true)
		if !r.Drift {
			t.Fatalf("%q: no drift", content)
		}
		return r.DriftFound
	}
	if got := found("port 8080\n", 0o644); got != "port 8080\n" {
		t.Fatalf("found %q, want what was written", got)
	}
	if got := found("port 80\n", 0o600); got != "" {
		t.Fatalf("a mode change found %q", got)
	}
	if got := found("bin\x00ary\n", 0o644); got != "" {
		t.Fatalf("a binary file found %q", got)
	}
	if got := found(strings.Repeat("x", hq.MaxDriftFound+1), 0o644); got != "" {
		t.Fatalf("a large file found %d bytes", len(got))
	}
	os.Remove(b.path("/etc/app.conf"))
	if r := b.reconcile(d).want(t, "app/conf", hq.StateApplied, true, true); r.DriftFound != "" {
		t.Fatalf("a missing file found %q", r.DriftFound)
	}
}
