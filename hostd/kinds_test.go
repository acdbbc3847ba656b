package hostd

import (
	"encoding/base64"
	"os"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

func TestFileCreatedWithModeAndParents(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false,
		hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app/deep/app.conf", Content: "v1\n", Mode: "0600"},
		hq.Resource{Name: "bin", Kind: hq.KindFile, Path: "/opt/app/blob", ContentBase64: base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff})},
	))
	rs := b.reconcile(d)
	rs.want(t, "app/conf", hq.StateApplied, true, true)
	rs.want(t, "app/bin", hq.StateApplied, true, true)
	if got := b.read("/etc/app/deep/app.conf"); got != "v1\n" {
		t.Fatalf("content %q", got)
	}
	if m := b.mode("/etc/app/deep/app.conf"); m != 0o600 {
		t.Fatalf("mode %o, want 600", m)
	}
	if m := b.mode("/etc/app/deep"); m != 0o755 {
		t.Fatalf("parent mode %o, want 755", m)
	}
	if got := b.read("/opt/app/blob"); got != "\x00\x01\x02\xff" {
		t.Fatalf("base64 content %q", got)
	}
	if m := b.mode("/opt/app/blob"); m != 0o644 {
		t.Fatalf("default mode %o, want 644", m)
	}
	b.noLitter("/etc/app/deep")

	rs = b.reconcile(d)
	rs.want(t, "app/conf", hq.StateApplied, true, false)
	rs.want(t, "app/bin", hq.StateApplied, true, false)

	en := b.eng.ledger.Resources["app/conf"]
	if en == nil || en.Kind != hq.KindFile || en.Path != "/etc/app/deep/app.conf" || en.Content != contentHash([]byte("v1\n")) || en.Wrote != "created" {
		t.Fatalf("ledger entry %+v", en)
	}
}

func TestFileValidate(t *testing.T) {
	b := setup(t)
	b.write("/marker", "ok", 0o644)
	conf := func(content string, validate ...string) *hq.Declaration {
		return b.decl(mod("app", true, hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: content, Validate: validate}))
	}
	// {path} is the staged file and {root} the root.
	b.reconcile(conf("v1\n", "/bin/sh", "-c", `test -f {root}/marker && grep -q '^v' {path} && test {path} != {root}/etc/app.conf`)).
		want(t, "app/conf", hq.StateApplied, true, true)

	rs := b.reconcile(conf("broken\n", "/bin/sh", "-c", "echo 'line 3: bad directive' >&2; exit 1"))
	r := rs.want(t, "app/conf", hq.StateFailed, true, false)
	if !strings.HasPrefix(r.Error, "validate: exit status 1: line 3: bad directive") {
		t.Fatalf("error %q", r.Error)
	}
	if got := b.read("/etc/app.conf"); got != "v1\n" {
		t.Fatalf("a failed validate replaced the file: %q", got)
	}
	b.noLitter("/etc")
}

// A chatty validate's error keeps its last lines, in the order printed, stdout and stderr
// together.
func TestFileValidateErrorKeepsTheLastLines(t *testing.T) {
	b := setup(t)
	script := "for i in $(seq 1 500); do echo noise $i; done; echo 'line 3: unknown directive' >&2; exit 1"
	d := b.decl(mod("app", true, hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/app.conf", Content: "x",
		Validate: []string{"/bin/sh", "-c", script}}))
	r := b.reconcile(d).want(t, "app/conf", hq.StateFailed, true, false)
	want := "validate: exit status 1: …noise 492\n"
	if !strings.HasPrefix(r.Error, want) || !strings.HasSuffix(r.Error, "noise 500\nline 3: unknown directive") {
		t.Fatalf("error %q, want it to start %q and end with the last lines", r.Error, want)
	}
	if n := strings.Count(r.Error, "\n") + 1; n != hq.MaxOutputLines {
		t.Fatalf("%d lines in the error, want %d", n, hq.MaxOutputLines)
	}
}

func TestFileValidateFailureCreatesNothing(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", true, hq.Resource{Name: "conf", Kind: hq.KindFile, Path: "/etc/new/app.conf", Content: "x", Validate: []string{"false"}}))
	b.reconcile(d).want(t, "app/conf", hq.StateFailed, true, false)
	if b.exists("/etc/new") {
		t.Fatal("the parent made for a file that failed to validate was left")
	}
	if b.eng.ledger.Resources["app/conf"] != nil {
		t.Fatal("a failed file is in the ledger")
	}
}

func TestDirectory(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false,
		hq.Resource{Name: "data", Kind: hq.KindDirectory, Path: "/var/lib/app"},
		hq.Resource{Name: "secret", Kind: hq.KindDirectory, Path: "/var/lib/app/secret", Mode: "0700"},
	))
	rs := b.reconcile(d)
	rs.want(t, "app/data", hq.StateApplied, true, true)
	rs.want(t, "app/secret", hq.StateApplied, true, true)
	if m := b.mode("/var/lib/app"); m != 0o755 {
		t.Fatalf("mode %o", m)
	}
	if m := b.mode("/var/lib/app/secret"); m != 0o700 {
		t.Fatalf("mode %o", m)
	}
	b.reconcile(d).want(t, "app/secret", hq.StateApplied, true, false)

	if err := os.Chmod(b.path("/var/lib/app/secret"), 0o777); err != nil {
		t.Fatal(err)
	}
	r := b.reconcile(d).want(t, "app/secret", hq.StateApplied, true, true)
	if !r.Drift {
		t.Fatal("a chmod of a managed directory is not drift")
	}
	if m := b.mode("/var/lib/app/secret"); m != 0o700 {
		t.Fatalf("mode %o after drift", m)
	}
}

func TestSymlink(t *testing.T) {
	b := setup(t)
	d := b.decl(mod("app", false,
		hq.Resource{Name: "current", Kind: hq.KindSymlink, Path: "/opt/app/current", Target: "/opt/app/v2"},
		hq.Resource{Name: "rel", Kind: hq.KindSymlink, Path: "/opt/app/rel", Target: "v2"},
	))
	rs := b.reconcile(d)
	rs.want(t, "app/current", hq.StateApplied, true, true)
	rs.want(t, "app/rel", hq.StateApplied, true, true)
	if got, _ := os.Readlink(b.path("/opt/app/current")); got != b.path("/opt/app/v2") {
		t.Fatalf("absolute target %q, want it under the root", got)
	}
	if got, _ := os.Readlink(b.path("/opt/app/rel")); got != "v2" {
		t.Fatalf("relative target %q", got)
	}
	b.reconcile(d).want(t, "app/current", hq.StateApplied, true, false)

	os.Remove(b.path("/opt/app/current"))
	os.Symlink("/elsewhere", b.path("/opt/app/current"))
	r := b.reconcile(d).want(t, "app/current", hq.StateApplied, true, true)
	if got, _ := os.Readlink(b.path("/opt/app/current")); !r.Drift || got != b.path("/opt/app/v2") {
		t.Fatalf("drift %v, target %q", r.Drift, got)
	}
	b.noLitter("/opt/app")
}

func TestAbsent(t *testing.T) {
	b := setup(t)
	b.write("/etc/old.conf", "old", 0o644)
	b.write("/etc/olddir/inner", "old", 0o644)
	d := b.decl(mod("cleanup", true,
		hq.Resource{Name: "old", Kind: hq.KindAbsent, Path: "/etc/old.conf"},
		hq.Resource{Name: "olddir", Kind: hq.KindAbsent, Path: "/etc/olddir"},
		hq.Resource{Name: "never", Kind: hq.KindAbsent, Path: "/etc/never"},
	))
	rs := b.reconcile(d)
	rs.want(t, "cleanup/old", hq.StateApplied, true, true)
	rs.want(t, "cleanup/olddir", hq.StateApplied, true, true)
	rs.want(t, "cleanup/never", hq.StateApplied, true, false)
	if b.exists("/etc/old.conf") || b.exists("/etc/olddir") {
		t.Fatal("absent paths remain")
	}
	b.noLitter("/etc")
	b.reconcile(d).want(t, "cleanup/old", hq.StateApplied, true, false)
}

func TestKindChangeAtSamePath(t *testing.T) {
	b := setup(t)
	b.reconcile(b.decl(mod("app", false, hq.Resource{Name: "x", Kind: hq.KindDirectory, Path: "/srv/x"})))
	b.reconcile(b.decl(mod("app", false, file("x", "/srv/x", "now a file")))).want(t, "app/x", hq.StateApplied, true, true)
	if got := b.read("/srv/x"); got != "now a file" {
		t.Fatalf("content %q", got)
	}
}
