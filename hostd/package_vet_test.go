package hostd

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/internal/testenv"
)

// wantRefused checks that ref failed with an error holding want, and that dpkg in the root
// knows nothing of pkgName.
func (b *bed) wantRefused(rs results, ref, pkgName, want string) {
	b.t.Helper()
	r := rs.want(b.t, ref, hq.StateFailed, true, false)
	if !strings.Contains(r.Error, want) {
		b.t.Fatalf("%s's error %q, want %q in it", ref, r.Error, want)
	}
	b.t.Logf("%s: %s", ref, r.Error)
	if got := b.dpkgStatus(pkgName); got != "" {
		b.t.Fatalf("dpkg in the root says %q of %s", got, pkgName)
	}
}

// noLink fails if rel under the root is a symbolic link.
func (b *bed) noLink(rel string) {
	b.t.Helper()
	if fi, err := os.Lstat(b.path(rel)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		b.t.Fatalf("%s was made", rel)
	}
}

// debMember is one file of a package made by craftDeb: a directory (name ending in /), a file
// (body), a symbolic link (link), or a character device (dev).
type debMember struct {
	name, body, link string
	dev              bool
}

// craftDeb writes a package whose data is members, in that order, to p under the root, and
// returns p. It writes the archive itself, since a directory cannot hold what a crafted
// package may: a link and a file beneath it.
func (b *bed) craftDeb(name, version, p string, members ...debMember) string {
	b.t.Helper()
	tarGz := func(add func(tw *tar.Writer)) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		add(tw)
		if err := tw.Close(); err != nil {
			b.t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			b.t.Fatal(err)
		}
		return buf.Bytes()
	}
	put := func(tw *tar.Writer, h *tar.Header, body string) {
		h.Uname, h.Gname, h.ModTime = "root", "root", time.Unix(1e9, 0)
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			b.t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			b.t.Fatal(err)
		}
	}
	control := tarGz(func(tw *tar.Writer) {
		put(tw, &tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, "")
		put(tw, &tar.Header{Name: "./control", Typeflag: tar.TypeReg, Mode: 0o644},
			"Package: "+name+"\nVersion: "+version+"\nArchitecture: all\nMaintainer: hq tests <tests@example.com>\nDescription: a package crafted by a test\n")
	})
	data := tarGz(func(tw *tar.Writer) {
		put(tw, &tar.Header{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755}, "")
		for _, m := range members {
			switch {
			case m.link != "":
				put(tw, &tar.Header{Name: "./" + m.name, Typeflag: tar.TypeSymlink, Linkname: m.link, Mode: 0o777}, "")
			case m.dev:
				put(tw, &tar.Header{Name: "./" + m.name, Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3}, "")
			case strings.HasSuffix(m.name, "/"):
				put(tw, &tar.Header{Name: "./" + m.name, Typeflag: tar.TypeDir, Mode: 0o755}, "")
			default:
				put(tw, &tar.Header{Name: "./" + m.name, Typeflag: tar.TypeReg, Mode: 0o644}, m.body)
			}
		}
	})
	// A .deb is an ar archive of debian-binary, control.tar.gz and data.tar.gz, in that order.
	var deb bytes.Buffer
	deb.WriteString("!<arch>\n")
	for _, f := range []struct {
		name string
		body []byte
	}{{"debian-binary", []byte("2.0\n")}, {"control.tar.gz", control}, {"data.tar.gz", data}} {
		fmt.Fprintf(&deb, "%-16s%-12d%-6d%-6d%-8s%-10d`\n", f.name, 1000000000, 0, 0, "100644", len(f.body))
		deb.Write(f.body)
		if len(f.body)%2 == 1 {
			deb.WriteByte('\n')
		}
	}
	if err := os.MkdirAll(filepath.Dir(b.path(p)), 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(b.path(p), deb.Bytes(), 0o644); err != nil {
		b.t.Fatal(err)
	}
	if out, err := exec.Command("dpkg-deb", "--info", b.path(p)).CombinedOutput(); err != nil {
		b.t.Fatalf("the crafted package is no package: %v: %s", err, out)
	}
	return p
}

func TestPackageShippingALinkOutOfTheRootIsRefused(t *testing.T) {
	needDpkg(t)
	for _, tc := range []struct {
		name, target string
		// under, when set, is a file the package also ships beneath the link.
		under bool
	}{
		{"absolute", "", false},
		{"absolute with a file beneath", "", true},
		// From /opt in the root, ../../outside is the directory beside the root.
		{"relative", "../../outside", false},
		{"relative with a file beneath", "../../outside", true},
		{"relative from deep down", "../../../../../../../../../../..", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			out := b.outside()
			target := tc.target
			if target == "" {
				target = out
			}
			ms := []debMember{{name: "opt/"}, {name: "opt/link", link: target}}
			if tc.under {
				ms = append(ms, debMember{name: "opt/link/pwned", body: "x"})
			}
			deb := b.craftDeb("hq-evil", "1.0", "/srv/pkgs/hq-evil.deb", ms...)
			rs := b.reconcile(b.decl(mod("app", true, pkg("evil", "hq-evil", "", deb))))
			b.wantRefused(rs, "app/evil", "hq-evil", "source /srv/pkgs/hq-evil.deb: /opt/link is a symbolic link to "+target+", outside HOSTD_ROOT")
			untouched(t, out)
			b.noLink("/opt/link")
		})
	}
}

func TestPackageLinksInsideTheRootAreInstalled(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	out := b.outside()
	// A link to a sibling, one up and back down, and one whose absolute target is in the root
	// (as hostd writes a declared link's): all stay inside, and so does what is written through.
	abs := b.path("/usr/share/hq-links")
	for _, d := range []string{b.path("/opt"), abs} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(abs, b.path("/opt/share")); err != nil {
		t.Fatal(err)
	}
	deb := b.buildDebTree("hq-links", "1.0", "/srv/pkgs/hq-links.deb", "", func(src string) {
		writeTree(t, src, "usr/share/hq-links/version", "1.0\n", 0o644)
		linkTree(t, src, "usr/share/hq-links/current", "version")
		linkTree(t, src, "usr/lib/hq-links", "../share/hq-links")
		writeTree(t, src, "usr/lib/hq-links/through", "x", 0o644)
		writeTree(t, src, "opt/share/through-the-node", "y", 0o644)
	})
	b.reconcile(b.decl(mod("app", true, pkg("links", "hq-links", "", deb)))).want(t, "app/links", hq.StateApplied, true, true)
	if b.read("/usr/share/hq-links/current") != "1.0\n" || b.read("/usr/share/hq-links/through") != "x" || b.read("/usr/share/hq-links/through-the-node") != "y" {
		t.Fatal("the package's files are not where its links lead")
	}
	untouched(t, out)
}

func TestPackageThroughALinkOnTheNodeIsRefused(t *testing.T) {
	needDpkg(t)
	for _, tc := range []struct {
		name string
		// crafted leaves out the package's entry for /opt/link itself, which dpkg-deb adds.
		crafted bool
		target  string
		want    string
	}{
		{"absolute", false, "", "/opt/link is a symbolic link on this node to OUT, outside HOSTD_ROOT"},
		{"relative", false, "../../outside", "/opt/link is a symbolic link on this node to OUT, outside HOSTD_ROOT"},
		{"absolute, the file alone", true, "", "/opt/link/file would be written through /opt/link, a symbolic link on this node to OUT, outside HOSTD_ROOT"},
		{"relative, the file alone", true, "../../outside", "/opt/link/file would be written through /opt/link, a symbolic link on this node to OUT, outside HOSTD_ROOT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			out := b.outside()
			target := tc.target
			if target == "" {
				target = out
			}
			// Already in the root, as another package or someone by hand left it.
			if err := os.MkdirAll(b.path("/opt"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, b.path("/opt/link")); err != nil {
				t.Fatal(err)
			}
			var deb string
			if tc.crafted {
				deb = b.craftDeb("hq-b", "1.0", "/srv/pkgs/hq-b.deb", debMember{name: "opt/"}, debMember{name: "opt/link/file", body: "x"})
			} else {
				deb = b.buildDebTree("hq-b", "1.0", "/srv/pkgs/hq-b.deb", "", func(src string) {
					writeTree(t, src, "opt/link/file", "x", 0o644)
				})
			}
			rs := b.reconcile(b.decl(mod("app", true, pkg("b", "hq-b", "", deb))))
			untouched(t, out)
			b.wantRefused(rs, "app/b", "hq-b", "source /srv/pkgs/hq-b.deb: "+strings.ReplaceAll(tc.want, "OUT", target))
		})
	}
}

func TestPackageLinksAreResolvedAsTheKernelDoes(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	out := b.outside()
	// /opt/up leads to the root itself: inside. Read lexically, /opt/esc -> up/../../outside
	// is /outside in the root; the kernel resolves up first, and its ../.. then leaves the root.
	if err := os.MkdirAll(b.path("/opt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", b.path("/opt/up")); err != nil {
		t.Fatal(err)
	}
	deb := b.craftDeb("hq-esc", "1.0", "/srv/pkgs/hq-esc.deb",
		debMember{name: "opt/"}, debMember{name: "opt/esc", link: "up/../../outside"}, debMember{name: "opt/esc/pwned", body: "x"})
	rs := b.reconcile(b.decl(mod("app", true, pkg("esc", "hq-esc", "", deb))))
	b.wantRefused(rs, "app/esc", "hq-esc", "/opt/esc is a symbolic link to up/../../outside, outside HOSTD_ROOT")
	untouched(t, out)
	b.noLink("/opt/esc")

	// The same with the first link in the package: the kernel follows it just as well.
	b2 := setup(t)
	out = b2.outside()
	deb = b2.craftDeb("hq-esc", "1.0", "/srv/pkgs/hq-esc.deb",
		debMember{name: "opt/"}, debMember{name: "opt/up", link: ".."}, debMember{name: "opt/esc", link: "up/../../outside"},
		debMember{name: "opt/esc/pwned", body: "x"})
	rs = b2.reconcile(b2.decl(mod("app", true, pkg("esc", "hq-esc", "", deb))))
	b2.wantRefused(rs, "app/esc", "hq-esc", "/opt/esc is a symbolic link to up/../../outside, outside HOSTD_ROOT")
	untouched(t, out)
}

func TestPackageShippingADeviceNodeIsRefused(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	// A device node in the root opens the device itself, whatever the root.
	deb := b.craftDeb("hq-dev", "1.0", "/srv/pkgs/hq-dev.deb", debMember{name: "opt/"}, debMember{name: "opt/null", dev: true})
	rs := b.reconcile(b.decl(mod("app", true, pkg("dev", "hq-dev", "", deb))))
	b.wantRefused(rs, "app/dev", "hq-dev", "source /srv/pkgs/hq-dev.deb: /opt/null is a device node")
	if b.exists("/opt/null") {
		t.Fatal("the device node was made")
	}
}

// shellInRoot copies /bin/sh, and the libraries it loads, into the root: dpkg runs maintainer
// scripts chrooted into it.
func (b *bed) shellInRoot() {
	b.t.Helper()
	files := []string{"/bin/sh"}
	if out, err := exec.Command("ldd", "/bin/sh").Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "/") {
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			testenv.Missing(b.t, "no shell to put in the root: %v", err)
		}
		b.write(f, string(data), 0o755)
	}
}

// buildDebWithPostinst builds hq-scripted, whose postinst writes /var/lib/hq-scripted/ran.
func (b *bed) buildDebWithPostinst() string {
	b.t.Helper()
	return b.buildDebTree("hq-scripted", "1.0", "/srv/pkgs/hq-scripted.deb", "", func(src string) {
		writeTree(b.t, src, "usr/share/hq-scripted/version", "1.0\n", 0o644)
		writeTree(b.t, src, "DEBIAN/postinst", "#!/bin/sh\necho ran > /var/lib/hq-scripted/ran\n", 0o755)
	})
}

func TestPackageMaintainerScriptsRunOnlyWhenAllowed(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	b.shellInRoot()
	if err := os.MkdirAll(b.path("/var/lib/hq-scripted"), 0o755); err != nil {
		t.Fatal(err)
	}
	deb := b.buildDebWithPostinst()
	r := pkg("s", "hq-scripted", "", deb)
	rs := b.reconcile(b.decl(mod("app", true, r)))
	b.wantRefused(rs, "app/s", "hq-scripted", `source /srv/pkgs/hq-scripted.deb: has maintainer scripts (postinst), which run as root: refused unless the resource sets "scripts": true`)
	if b.exists("/var/lib/hq-scripted/ran") || b.exists("/usr/share/hq-scripted/version") {
		t.Fatal("the refused package was installed, or its postinst ran")
	}

	r.Scripts = true
	b.reconcile(b.decl(mod("app", true, r))).want(t, "app/s", hq.StateApplied, true, true)
	if got := b.dpkgStatus("hq-scripted"); got != "install ok installed 1.0" {
		t.Fatalf("dpkg in the root says %q", got)
	}
	if b.read("/var/lib/hq-scripted/ran") != "ran\n" {
		t.Fatal("the postinst did not run")
	}
	if _, err := os.Stat("/var/lib/hq-scripted/ran"); err == nil {
		t.Fatal("the postinst ran outside the root")
	}
}

func TestPackageWithoutScriptsIsInstalledWithoutScripts(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	// Shipped files, a link and a conffile are not scripts: such a package needs no "scripts".
	deb := b.buildDebTree("hq-plain", "1.0", "/srv/pkgs/hq-plain.deb", "", func(src string) {
		writeTree(t, src, "etc/hq-plain.conf", "x\n", 0o644)
		writeTree(t, src, "DEBIAN/conffiles", "/etc/hq-plain.conf\n", 0o644)
		linkTree(t, src, "usr/share/hq-plain/conf", "../../../etc/hq-plain.conf")
	})
	b.reconcile(b.decl(mod("app", true, pkg("p", "hq-plain", "", deb)))).want(t, "app/p", hq.StateApplied, true, true)
	if b.read("/usr/share/hq-plain/conf") != "x\n" {
		t.Fatal("the package's link does not lead to its conffile")
	}
}

// aptRepo makes a repository of debs (paths under the root) for apt in the root, and has apt
// read it: a flat repository in a directory beside the root, which apt trusts unsigned.
func (b *bed) aptRepo(debs ...string) {
	b.t.Helper()
	testenv.Need(b.t, "apt-get")
	repo := b.t.TempDir()
	var index strings.Builder
	for _, deb := range debs {
		name := filepath.Base(deb)
		data, err := os.ReadFile(b.path(deb))
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, name), data, 0o644); err != nil {
			b.t.Fatal(err)
		}
		control, err := exec.Command("dpkg-deb", "--field", b.path(deb)).Output()
		if err != nil {
			b.t.Fatal(err)
		}
		out, err := exec.Command("sha256sum", b.path(deb)).Output()
		if err != nil {
			b.t.Fatal(err)
		}
		index.WriteString(strings.TrimRight(string(control), "\n") + "\nFilename: ./" + name +
			"\nSize: " + strconv.Itoa(len(data)) + "\nSHA256: " + strings.Fields(string(out))[0] + "\n\n")
	}
	if err := os.WriteFile(filepath.Join(repo, "Packages"), []byte(index.String()), 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.write("/etc/apt/sources.list", "deb [trusted=yes] file:"+repo+" ./\n", 0o644)
	for _, d := range []string{"/etc/apt/preferences.d", "/etc/apt/apt.conf.d", "/var/lib/apt/lists/partial", "/var/cache/apt/archives/partial"} {
		if err := os.MkdirAll(b.path(d), 0o755); err != nil {
			b.t.Fatal(err)
		}
	}
	if err := b.eng.dpkgAdminDir(); err != nil {
		b.t.Fatal(err)
	}
	if out, err := exec.Command("apt-get", "-q", "-o", "Dir="+b.root, "update").CombinedOutput(); err != nil {
		b.t.Fatalf("apt-get update: %v: %s", err, out)
	}
}

func TestPackageFromARepositoryIsVetted(t *testing.T) {
	needDpkg(t)
	b := setup(t)
	out := b.outside()
	b.shellInRoot()
	if err := os.MkdirAll(b.path("/var/lib/hq-scripted"), 0o755); err != nil {
		t.Fatal(err)
	}
	evil := b.buildDebTree("hq-evil", "1.0", "/srv/pkgs/hq-evil.deb", "", func(src string) {
		linkTree(t, src, "opt/link", out)
	})
	b.aptRepo(b.buildDebWithPostinst(), b.buildDebDepending("hq-app", "1.0", "hq-scripted"), evil)

	// What apt would install for it is vetted too: here a dependency's postinst.
	app := pkg("app", "hq-app", "", "")
	rs := b.reconcile(b.decl(mod("app", true, app)))
	b.wantRefused(rs, "app/app", "hq-app", `hq-scripted_1.0_all.deb (for hq-app): has maintainer scripts (postinst), which run as root: refused unless the resource sets "scripts": true`)
	if b.dpkgStatus("hq-scripted") != "" || b.exists("/var/lib/hq-scripted/ran") {
		t.Fatal("the dependency was installed, or its postinst ran")
	}
	app.Scripts = true
	b.reconcile(b.decl(mod("app", true, app))).want(t, "app/app", hq.StateApplied, true, true)
	if b.dpkgStatus("hq-app") != "install ok installed 1.0" || b.dpkgStatus("hq-scripted") != "install ok installed 1.0" {
		t.Fatalf("dpkg in the root says %q and %q", b.dpkgStatus("hq-app"), b.dpkgStatus("hq-scripted"))
	}
	if b.read("/var/lib/hq-scripted/ran") != "ran\n" {
		t.Fatal("the postinst did not run")
	}

	rs = b.reconcile(b.decl(mod("app", true, app, pkg("evil", "hq-evil", "", ""))))
	b.wantRefused(rs, "app/evil", "hq-evil", "hq-evil_1.0_all.deb (for hq-evil): /opt/link is a symbolic link to "+out+", outside HOSTD_ROOT")
	untouched(t, out)
	b.noLink("/opt/link")
}
