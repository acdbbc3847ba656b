package hostd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

// needDpkg skips a test without dpkg and dpkg-deb, except in CI, which must have them.
func needDpkg(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"dpkg", "dpkg-deb", "dpkg-query"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; CI must install it (.ci/run)", tool)
			}
			t.Skipf("%s is missing", tool)
		}
	}
}

// buildDeb builds a package with one file, /usr/share/<name>/version, holding its version,
// into dir under the root, and returns its path as a declaration names it.
func (b *bed) buildDeb(name, version string) string {
	b.t.Helper()
	return b.buildDebDepending(name, version, "")
}

// buildDebDepending is buildDeb for a package that depends on depends (when not empty).
func (b *bed) buildDebDepending(name, version, depends string) string {
	b.t.Helper()
	control := ""
	p := "/srv/pkgs/" + name + "_" + version + "_all.deb"
	if depends != "" {
		control = "Depends: " + depends + "\n"
		p = "/srv/pkgs/" + name + "_" + version + "_all+deps.deb"
	}
	return b.buildDebTree(name, version, p, control, func(src string) {
		b.t.Helper()
		writeTree(b.t, src, "usr/share/"+name+"/version", version+"\n", 0o644)
	})
}

// buildDebTree builds a package whose files are what tree makes in the directory it is given
// (where it may also add to DEBIAN, the control directory), with control added to its control
// file, into p under the root, and returns p.
func (b *bed) buildDebTree(name, version, p, control string, tree func(src string)) string {
	b.t.Helper()
	src := b.t.TempDir()
	writeTree(b.t, src, "DEBIAN/control", "Package: "+name+"\nVersion: "+version+"\nArchitecture: all\nMaintainer: hq tests <tests@example.com>\nDescription: a package built by a test\n"+control, 0o644)
	tree(src)
	if err := os.MkdirAll(filepath.Dir(b.path(p)), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", src, b.path(p)).CombinedOutput(); err != nil {
		b.t.Fatalf("dpkg-deb: %v: %s", err, out)
	}
	return p
}

// writeTree writes content to rel under dir, making its parent directories.
func writeTree(t *testing.T, dir, rel, content string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// linkTree makes a symbolic link rel -> target under dir, making its parent directories.
func linkTree(t *testing.T, dir, rel, target string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// dpkgStatus is what dpkg's database in the root says of name: "install ok installed 1.0",
// or "" when it knows no such package.
func (b *bed) dpkgStatus(name string) string {
	b.t.Helper()
	out, err := exec.Command("dpkg-query", "--root="+b.root, "--show", "--showformat=${Status} ${Version}", name).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

// dpkgByHand is someone else changing a package in the root behind hostd's back.
func (b *bed) dpkgByHand(args ...string) {
	b.t.Helper()
	args = append([]string{"--root=" + b.root, "--log=" + b.path("/var/log/dpkg.log"), "--force-not-root"}, args...)
	if out, err := exec.Command("dpkg", args...).CombinedOutput(); err != nil {
		b.t.Fatalf("dpkg %q: %v: %s", args, err, out)
	}
}

func pkg(name, pkgName, version, source string) hq.Resource {
	return hq.Resource{Name: name, Kind: hq.KindPackage, Package: pkgName, Version: version, Source: source}
}

func TestPackageInstalledFromASourceAndRemoved(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	deb := b.buildDeb("hq-demo", "1.0")
	present := b.decl(mod("app", false, pkg("demo", "hq-demo", "1.0", deb)))
	b.reconcile(present).want(t, "app/demo", hq.StateApplied, true, true)
	if got := b.dpkgStatus("hq-demo"); got != "install ok installed 1.0" {
		t.Fatalf("dpkg in the root says %q", got)
	}
	if got := b.read("/usr/share/hq-demo/version"); got != "1.0\n" {
		t.Fatalf("installed file %q", got)
	}
	if out, err := exec.Command("dpkg-query", "--show", "hq-demo").CombinedOutput(); err == nil {
		t.Fatalf("the package reached the machine's own dpkg database: %s", out)
	}
	if !b.exists("/var/log/dpkg.log") {
		t.Fatal("dpkg did not log inside the root")
	}
	b.reconcile(present).want(t, "app/demo", hq.StateApplied, true, false)

	absent := b.decl(mod("app", false, hq.Resource{Name: "demo", Kind: hq.KindPackage, Package: "hq-demo", State: hq.PackageAbsent}))
	b.reconcile(absent).want(t, "app/demo", hq.StateApplied, true, true)
	if got := b.dpkgStatus("hq-demo"); strings.Contains(got, " installed") {
		t.Fatalf("dpkg in the root still says %q", got)
	}
	if b.exists("/usr/share/hq-demo/version") {
		t.Fatal("the package's file is still there")
	}
	b.reconcile(absent).want(t, "app/demo", hq.StateApplied, true, false)
}

func TestPackageAnyVersionCounts(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	deb := b.buildDeb("hq-demo", "1.0")
	d := b.decl(mod("app", false, pkg("demo", "hq-demo", "", deb)))
	b.reconcile(d).want(t, "app/demo", hq.StateApplied, true, true)
	b.dpkgByHand("--install", b.path(b.buildDeb("hq-demo", "1.1")))
	// No version declared: whatever is installed counts, so an upgrade by hand is no drift.
	r := b.reconcile(d).want(t, "app/demo", hq.StateApplied, true, false)
	if r.Drift {
		t.Fatalf("%+v", r)
	}
}

func TestPackageUpgradeAndDrift(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	v1, v2 := b.buildDeb("hq-demo", "1.0"), b.buildDeb("hq-demo", "2.0")
	b.reconcile(b.decl(mod("app", false, pkg("demo", "hq-demo", "1.0", v1)))).want(t, "app/demo", hq.StateApplied, true, true)
	d := b.decl(mod("app", false, pkg("demo", "hq-demo", "2.0", v2)))
	r := b.reconcile(d).want(t, "app/demo", hq.StateApplied, true, true)
	if r.Drift || b.dpkgStatus("hq-demo") != "install ok installed 2.0" {
		t.Fatalf("upgrade: %+v, dpkg says %q", r, b.dpkgStatus("hq-demo"))
	}

	b.dpkgByHand("--install", b.path(v1))
	r = b.reconcile(d).want(t, "app/demo", hq.StateApplied, true, true)
	if !r.Drift || r.DriftDetail != "version 1.0 (want 2.0)" || b.dpkgStatus("hq-demo") != "install ok installed 2.0" {
		t.Fatalf("downgraded by hand: %+v, dpkg says %q", r, b.dpkgStatus("hq-demo"))
	}
	b.dpkgByHand("--remove", "hq-demo")
	r = b.reconcile(d).want(t, "app/demo", hq.StateApplied, true, true)
	if !r.Drift || r.DriftDetail != "not installed" || b.dpkgStatus("hq-demo") != "install ok installed 2.0" {
		t.Fatalf("removed by hand: %+v", r)
	}
	r = b.reconcile(d).want(t, "app/demo", hq.StateApplied, true, false)
	if r.Drift {
		t.Fatalf("no-op: %+v", r)
	}

	absent := b.decl(mod("app", false, hq.Resource{Name: "demo", Kind: hq.KindPackage, Package: "hq-demo", State: hq.PackageAbsent}))
	b.reconcile(absent).want(t, "app/demo", hq.StateApplied, true, true)
	b.dpkgByHand("--install", b.path(v1))
	r = b.reconcile(absent).want(t, "app/demo", hq.StateApplied, true, true)
	if !r.Drift || r.DriftDetail != "installed 1.0 (want absent)" || b.dpkgStatus("hq-demo") != "deinstall ok config-files 1.0" && b.dpkgStatus("hq-demo") != "" {
		t.Fatalf("installed by hand: %+v, dpkg says %q", r, b.dpkgStatus("hq-demo"))
	}
}

func TestPackageSourceMustBeWhatIsDeclared(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	other := b.buildDeb("hq-other", "1.0")
	v1 := b.buildDeb("hq-demo", "1.0")
	for _, tc := range []struct {
		r    hq.Resource
		want string
	}{
		{pkg("demo", "hq-demo", "", other), `source /srv/pkgs/hq-other_1.0_all.deb is package "hq-other", not "hq-demo"`},
		{pkg("demo", "hq-demo", "2.0", v1), "source /srv/pkgs/hq-demo_1.0_all.deb is version 1.0 of hq-demo, not 2.0"},
		{pkg("demo", "hq-demo", "", "/srv/pkgs/missing.deb"), "source /srv/pkgs/missing.deb:"},
	} {
		r := b.reconcile(b.decl(mod("app", false, tc.r))).want(t, "app/demo", hq.StateFailed, true, false)
		if !strings.HasPrefix(r.Error, tc.want) {
			t.Errorf("error %q, want %q", r.Error, tc.want)
		}
		if b.dpkgStatus("hq-demo") != "" || b.dpkgStatus("hq-other") != "" {
			t.Fatal("something was installed")
		}
	}
}

func TestPackageNoLongerDeclared(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	deb := b.buildDeb("hq-demo", "1.0")
	found := b.buildDeb("hq-found", "3.0")
	b.dpkgByHand("--install", b.path(found))

	d := b.decl(mod("app", false, pkg("demo", "hq-demo", "1.0", deb), pkg("found", "hq-found", "", "")))
	rs := b.reconcile(d)
	rs.want(t, "app/demo", hq.StateApplied, true, true)
	// Found installed, as declared, for a module that is not taken: adopted, not hostd's.
	rs.want(t, "app/found", hq.StateApplied, true, false)
	if en := b.eng.ledger.Resources["app/found"]; en == nil || !en.Found || en.Wrote != "adopted" {
		t.Fatalf("ledger entry of a package found installed: %+v", en)
	}
	// Found at another version: held, never changed, for a module that is not taken.
	held := b.decl(mod("app", false, pkg("demo", "hq-demo", "1.0", deb), pkg("found", "hq-found", "4.0", "")))
	r := b.reconcile(held).want(t, "app/found", hq.StateHeld, false, false)
	if r.HoldReason != "would change package hq-found 3.0 to 4.0, found on this node; not applied until app is taken" {
		t.Fatalf("hold reason %q", r.HoldReason)
	}

	b.reconcile(b.decl(mod("app", false, file("f", "/etc/f", "x"))))
	if got := b.dpkgStatus("hq-demo"); strings.Contains(got, " installed") {
		t.Fatalf("the package hostd installed was not removed: %q", got)
	}
	if got := b.dpkgStatus("hq-found"); got != "install ok installed 3.0" {
		t.Fatalf("the package hostd only found was touched: %q", got)
	}
	if b.eng.ledger.Resources["app/demo"] != nil || b.eng.ledger.Resources["app/found"] != nil {
		t.Fatal("the ledger still names packages no longer declared")
	}
}

func TestPackageRenamedRemovesTheOldOne(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	a, c := b.buildDeb("hq-a", "1.0"), b.buildDeb("hq-c", "1.0")
	b.reconcile(b.decl(mod("app", false, pkg("p", "hq-a", "", a)))).want(t, "app/p", hq.StateApplied, true, true)
	b.reconcile(b.decl(mod("app", false, pkg("p", "hq-c", "", c)))).want(t, "app/p", hq.StateApplied, true, true)
	if strings.Contains(b.dpkgStatus("hq-a"), " installed") || b.dpkgStatus("hq-c") != "install ok installed 1.0" {
		t.Fatalf("hq-a %q, hq-c %q", b.dpkgStatus("hq-a"), b.dpkgStatus("hq-c"))
	}
}

func TestPackageStateIsReadOncePerReconcile(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	var rs []hq.Resource
	for _, n := range []string{"hq-a", "hq-b", "hq-c"} {
		rs = append(rs, pkg(n, n, "", b.buildDeb(n, "1.0")))
	}
	d := b.decl(mod("app", false, rs...))
	b.reconcile(d)
	before := b.eng.pkgQueries
	for _, r := range b.reconcile(d) {
		if r.Changed || r.Outcome != hq.StateApplied {
			t.Fatalf("%+v", r)
		}
	}
	if n := b.eng.pkgQueries - before; n != 1 {
		t.Fatalf("%d dpkg-query runs for a no-op reconcile of 3 packages, want 1", n)
	}
}

func TestPackageTakenModuleChangesWhatItFinds(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	b.dpkgByHand("--install", b.path(b.buildDeb("hq-found", "3.0")))
	v4 := b.buildDeb("hq-found", "4.0")
	r := b.reconcile(b.decl(mod("app", true, pkg("found", "hq-found", "4.0", v4)))).want(t, "app/found", hq.StateApplied, true, true)
	if r.Drift || b.dpkgStatus("hq-found") != "install ok installed 4.0" {
		t.Fatalf("%+v, dpkg says %q", r, b.dpkgStatus("hq-found"))
	}
	if en := b.eng.ledger.Resources["app/found"]; en == nil || en.Found || en.Wrote != "replaced" || en.Package != "hq-found" {
		t.Fatalf("ledger entry %+v", en)
	}
}

func TestPackageRemovalRefusedByDpkgFails(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	lib := b.buildDeb("hq-lib", "1.0")
	b.reconcile(b.decl(mod("app", false, pkg("lib", "hq-lib", "", lib)))).want(t, "app/lib", hq.StateApplied, true, true)
	// Something else installs a package that needs it: removing it is dpkg's to refuse.
	b.dpkgByHand("--install", b.path(b.buildDebDepending("hq-user", "1.0", "hq-lib")))
	r := b.reconcile(b.decl(mod("app", false, hq.Resource{Name: "lib", Kind: hq.KindPackage, Package: "hq-lib", State: hq.PackageAbsent}))).
		want(t, "app/lib", hq.StateFailed, true, false)
	// dpkg leaves it installed but selected for removal; hostd selects it again.
	if !strings.Contains(r.Error, "dependency problems") || b.dpkgStatus("hq-lib") != "install ok installed 1.0" {
		t.Fatalf("error %q, dpkg says %q", r.Error, b.dpkgStatus("hq-lib"))
	}
}
