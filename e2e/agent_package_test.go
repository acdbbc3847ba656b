package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testdb"
)

// needDpkg skips a test without dpkg, except in CI, which must have it (.ci/run installs it).
func needDpkg(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"dpkg", "dpkg-deb", "dpkg-query"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing; CI must install it", tool)
			}
			t.Skipf("%s is missing", tool)
		}
	}
}

// buildDeb builds package name at version, holding /usr/share/<name>/version, and puts it
// under root at the path it returns, as a module names it.
func buildDeb(t *testing.T, root, name, version string) string {
	t.Helper()
	src := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(src, "DEBIAN"), 0o755))
	must(os.WriteFile(filepath.Join(src, "DEBIAN/control"), []byte("Package: "+name+"\nVersion: "+version+
		"\nArchitecture: all\nMaintainer: hq tests <tests@example.com>\nDescription: built by an hq test\n"), 0o644))
	must(os.MkdirAll(filepath.Join(src, "usr/share", name), 0o755))
	must(os.WriteFile(filepath.Join(src, "usr/share", name, "version"), []byte(version+"\n"), 0o644))
	p := "/srv/pkgs/" + name + "_" + version + "_all.deb"
	must(os.MkdirAll(filepath.Join(root, "srv/pkgs"), 0o755))
	if out, err := exec.Command("dpkg-deb", "--root-owner-group", "--build", src, filepath.Join(root, p)).CombinedOutput(); err != nil {
		t.Fatalf("dpkg-deb: %v: %s", err, out)
	}
	return p
}

// dpkgSays is what dpkg's database in root says of name, as `dpkg --root=ROOT -s` prints its
// status, or "" when it does not know the package.
func dpkgSays(t *testing.T, root, name string) string {
	t.Helper()
	out, err := exec.Command("dpkg", "--root="+root, "-s", name).CombinedOutput()
	if err != nil {
		return ""
	}
	var status, version string
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(line, "Status: "); ok {
			status = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "Version: "); ok {
			version = strings.TrimSpace(v)
		}
	}
	return status + " " + version
}

func TestAgentApplyPackage(t *testing.T) {
	needDpkg(t)
	a := newApplyBed(t)
	deb := buildDeb(t, a.root, "hq-e2e-demo", "1.0-1")
	present := hq.Resource{Name: "demo", Kind: hq.KindPackage, Package: "hq-e2e-demo", Version: "1.0-1", Source: deb}
	a.module(present, confFile("a", "v1\n"))
	if out := a.want("installing", 2, "applied 2 resource(s)"); !strings.Contains(out, "changed web/demo\n") {
		t.Fatalf("output %q", out)
	}
	if got := dpkgSays(t, a.root, "hq-e2e-demo"); got != "install ok installed 1.0-1" {
		t.Fatalf("dpkg in the root says %q", got)
	}
	if got := readFile(filepath.Join(a.root, "usr/share/hq-e2e-demo/version")); got != "1.0-1\n" {
		t.Fatalf("the package's file holds %q", got)
	}
	if got := dpkgSays(t, "/", "hq-e2e-demo"); got != "" {
		t.Fatalf("the machine's own dpkg knows the package: %q", got)
	}
	a.want("installed already", 0, "applied 2 resource(s)")

	a.module(hq.Resource{Name: "demo", Kind: hq.KindPackage, Package: "hq-e2e-demo", State: hq.PackageAbsent}, confFile("a", "v1\n"))
	if out := a.want("removing", 2, "applied 2 resource(s)"); out != "changed web/demo\napplied 2 resource(s)\n" {
		t.Fatalf("output %q", out)
	}
	if got := dpkgSays(t, a.root, "hq-e2e-demo"); strings.Contains(got, "ok installed") {
		t.Fatalf("dpkg in the root still says %q", got)
	}
	if _, err := os.Stat(filepath.Join(a.root, "usr/share/hq-e2e-demo/version")); err == nil {
		t.Fatal("the package's file is still there")
	}
	a.want("removed already", 0, "applied 2 resource(s)")
}

// A package goes through the controller like any resource: uploaded, composed, signed,
// applied by hostd run inside its root, and reported.
func TestAgentPackageThroughTheController(t *testing.T) {
	needDpkg(t)
	ctl := startController(t, testdb.New(t))
	c := newClient(t, ctl.url)
	h := newHost(t, c, ctl.url, "web-1")
	deb := buildDeb(t, h.root, "hq-e2e-tool", "2.0")
	c.putModule("tools", hq.Resource{Name: "tool", Kind: hq.KindPackage, Package: "hq-e2e-tool", Version: "2.0", Source: deb})
	c.assign("web-1", "tools", false)
	waitFor(t, 20*time.Second, "web-1 converged with the package", func() bool {
		v := c.node("web-1")
		return v.Status == hq.StatusConverged && resourceOf(v, "tools", "tool").State == hq.StateApplied
	})
	if got := dpkgSays(t, h.root, "hq-e2e-tool"); got != "install ok installed 2.0" {
		t.Fatalf("dpkg in the root says %q", got)
	}

	c.putModule("tools", hq.Resource{Name: "tool", Kind: hq.KindPackage, Package: "hq-e2e-tool", State: hq.PackageAbsent})
	waitFor(t, 20*time.Second, "the package removed", func() bool {
		return !strings.Contains(dpkgSays(t, h.root, "hq-e2e-tool"), "ok installed")
	})
	waitFor(t, 20*time.Second, "web-1 converged without the package", func() bool {
		v := c.node("web-1")
		return v.Status == hq.StatusConverged && resourceOf(v, "tools", "tool").State == hq.StateApplied
	})
}
