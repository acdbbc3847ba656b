package hostd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/meshhq/hq"
)

// packageStep installs or removes a Debian package with dpkg (a .deb source under the root)
// or apt (a repository). Under a root other than / it works inside that root: dpkg
// --root=ROOT with its admin dir, log and database there, apt with -o Dir=ROOT. What is
// installed is read from dpkg's database once per reconcile for every declared package.
// Every .deb is vetted before dpkg sees it (see vetDeb): under a root other than / for links
// that lead outside it, and for maintainer scripts the resource does not allow.
//
// A package cannot be staged: commit is the change, and undo cannot take it back (a package
// is refused in a group for that reason).
type packageStep struct{}

// pkgState is what dpkg's database says of one package.
type pkgState struct {
	installed bool
	version   string
}

// packages caches what dpkg's database says of the declared packages for one reconcile; a
// change to a package empties it.
type packages struct {
	names []string
	known map[string]pkgState
}

func (packageStep) check(ctx context.Context, o *op) error {
	st, err := o.e.packageState(ctx, o.decl.Package)
	if err != nil {
		return err
	}
	o.pkg, o.present = st, st.installed
	want := o.decl
	if want.State == hq.PackageAbsent {
		o.equal = !st.installed
	} else {
		o.equal = st.installed && (want.Version == "" || sameVersion(st.version, want.Version))
	}
	if o.equal {
		o.record = packageEntry(o, "adopted")
	}
	return nil
}

// packageEntry is the ledger entry of o as it is now on the machine; wrote is kept from the
// entry there when the spec is unchanged.
func packageEntry(o *op, wrote string) *Entry {
	if o.entry != nil && o.entry.Spec == o.spec {
		return o.entry
	}
	en := &Entry{Kind: hq.KindPackage, Spec: o.spec, Wrote: wrote}
	if o.entry != nil && wrote == "adopted" {
		en.Wrote = o.entry.Wrote
	}
	if o.decl.State != hq.PackageAbsent {
		// Only a present package has something to remove once it is no longer declared.
		en.Package = o.decl.Package
	}
	return en
}

// stage checks that a source is the package and version declared, before anything changes.
func (packageStep) stage(ctx context.Context, o *op) error {
	if o.decl.Source == "" || o.decl.State == hq.PackageAbsent {
		return nil
	}
	src, err := o.e.packageSource(o.decl.Source)
	if err != nil {
		return err
	}
	out, err := o.e.pkgCommand(ctx, []string{"dpkg-deb", "--field", src, "Package", "Version"})
	if err != nil {
		return fmt.Errorf("source %s: %w", o.decl.Source, err)
	}
	fields := debFields(out)
	if fields["Package"] != o.decl.Package {
		return fmt.Errorf("source %s is package %q, not %q", o.decl.Source, fields["Package"], o.decl.Package)
	}
	if o.decl.Version != "" && !sameVersion(fields["Version"], o.decl.Version) {
		return fmt.Errorf("source %s is version %s of %s, not %s", o.decl.Source, fields["Version"], o.decl.Package, o.decl.Version)
	}
	return nil
}

func (packageStep) commit(ctx context.Context, o *op) error {
	e, r := o.e, o.decl
	if err := e.dpkgAdminDir(); err != nil {
		return err
	}
	// Whatever happens next, what dpkg's database says is no longer known.
	e.pkgs.known = nil
	var args []string
	switch {
	case r.State == hq.PackageAbsent:
		args = append(e.dpkg(), "--remove", r.Package)
	case r.Source != "":
		src, err := e.packageSource(r.Source)
		if err != nil {
			return err
		}
		if err := e.confiner.check(src, false); err != nil {
			return err
		}
		deb := src
		if e.vetsDebs(r.Scripts) {
			// dpkg installs the very copy that was vetted, in a directory only hostd writes to.
			dir, err := os.MkdirTemp("", "hostd-deb-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if deb, err = copyInto(src, dir); err == nil {
				err = e.vetDeb(ctx, deb, r.Scripts)
			}
			if err != nil {
				return fmt.Errorf("source %s: %w", r.Source, err)
			}
		}
		args = append(e.dpkg(), "--install", deb)
	default:
		args = e.apt()
		target := r.Package
		if r.Version != "" {
			args = append(args, "--allow-downgrades")
			target += "=" + r.Version
		}
		if e.vetsDebs(r.Scripts) {
			dir, err := os.MkdirTemp("", "hostd-apt-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := e.aptFetchVetted(ctx, args, target, dir, r.Scripts); err != nil {
				return err
			}
			// apt checks each cached file against its lists, and --no-download keeps it to
			// them: what dpkg unpacks is what was vetted, or nothing.
			args = append(args, "-o", "Dir::Cache::Archives="+dir+"/", "--no-download")
		}
		args = append(args, "install", target)
	}
	if _, err := e.pkgCommand(ctx, args); err != nil {
		if r.State == hq.PackageAbsent {
			e.keepSelected(ctx, r.Package)
		}
		return err
	}
	o.committed = true
	st, err := e.packageState(ctx, r.Package)
	if err != nil {
		return err
	}
	switch {
	case r.State == hq.PackageAbsent && st.installed:
		return fmt.Errorf("%s is still installed (%s) after removing it", r.Package, st.version)
	case r.State != hq.PackageAbsent && !st.installed:
		return fmt.Errorf("%s is not installed after installing it", r.Package)
	case r.State != hq.PackageAbsent && r.Version != "" && !sameVersion(st.version, r.Version):
		return fmt.Errorf("%s is at version %s after installing %s", r.Package, st.version, r.Version)
	}
	wrote := o.wrote()
	if r.State == hq.PackageAbsent {
		wrote = "removed"
	}
	o.record = packageEntry(o, wrote)
	if o.record == o.entry {
		// The spec did not change, but hostd wrote it now (drift put back, or a taken module).
		en := *o.entry
		en.Wrote = wrote
		o.record = &en
	}
	return nil
}

// undo cannot take back what dpkg did; a package is never in a group.
func (packageStep) undo(context.Context, *op) error { return nil }

func (packageStep) finish(*op) {}

// packageDrift says what something else changed of a package hostd applied.
func (o *op) packageDrift() string {
	switch {
	case o.decl.State == hq.PackageAbsent:
		return fmt.Sprintf("installed %s (want absent)", o.pkg.version)
	case !o.pkg.installed:
		return "not installed"
	default:
		return fmt.Sprintf("version %s (want %s)", o.pkg.version, o.decl.Version)
	}
}

// packageHoldReason says why a package found on the machine, not as declared and not hostd's,
// is not changed for a module that is not taken.
func packageHoldReason(m hq.DeclaredModule, o *op) string {
	verb := fmt.Sprintf("change package %s %s to %s", o.decl.Package, o.pkg.version, o.decl.Version)
	if o.decl.State == hq.PackageAbsent {
		verb = fmt.Sprintf("remove package %s %s", o.decl.Package, o.pkg.version)
	}
	return fmt.Sprintf("would %s, found on this node; not applied until %s is taken", verb, m.Name)
}

// removePackage removes a package hostd installed that is no longer declared.
func (e *Engine) removePackage(ctx context.Context, name string) error {
	if name == "" {
		return nil
	}
	st, err := e.packageState(ctx, name)
	if err != nil || !st.installed {
		return err
	}
	if err := e.dpkgAdminDir(); err != nil {
		return err
	}
	e.pkgs.known = nil
	if _, err = e.pkgCommand(ctx, append(e.dpkg(), "--remove", name)); err != nil {
		e.keepSelected(ctx, name)
	}
	return err
}

// keepSelected marks name to be installed again after a removal dpkg refused (another package
// depends on it): dpkg leaves it installed but selected for removal, which a later apt-get
// run would carry out. A failed removal leaves the machine as it was.
func (e *Engine) keepSelected(ctx context.Context, name string) {
	st, err := e.packageState(ctx, name)
	if err != nil || !st.installed {
		return
	}
	e.pkgs.known = nil
	args := append(e.dpkg(), "--set-selections")
	if _, _, err := e.runPkgInput(ctx, args, name+" install\n"); err != nil {
		e.log.Warn("a refused removal left the package selected for removal", "package", name, "err", err)
	}
}

// sameVersion compares two Debian versions as dpkg writes them; epoch 0 is the same as none.
func sameVersion(a, b string) bool {
	return strings.TrimPrefix(a, "0:") == strings.TrimPrefix(b, "0:")
}

// packageState is what dpkg's database says of name. The first call in a reconcile asks for
// every declared package at once: one dpkg-query, not one per package.
func (e *Engine) packageState(ctx context.Context, name string) (pkgState, error) {
	if e.pkgs.known != nil {
		if st, ok := e.pkgs.known[name]; ok {
			return st, nil
		}
	}
	names := e.pkgs.names
	if e.pkgs.known != nil || !containsString(names, name) {
		names = []string{name}
	}
	known, err := e.queryPackages(ctx, names)
	if err != nil {
		return pkgState{}, err
	}
	if e.pkgs.known == nil {
		e.pkgs.known = known
	} else {
		e.pkgs.known[name] = known[name]
	}
	return known[name], nil
}

// queryPackages reads dpkg's database for names; a package dpkg does not know is not installed.
func (e *Engine) queryPackages(ctx context.Context, names []string) (map[string]pkgState, error) {
	known := make(map[string]pkgState, len(names))
	for _, n := range names {
		known[n] = pkgState{}
	}
	if _, err := os.Stat(filepath.Join(e.dpkgAdmin(), "status")); errors.Is(err, fs.ErrNotExist) {
		return known, nil // no database at all: nothing is installed (a fresh root)
	}
	args := []string{"dpkg-query"}
	if e.rootIsSlash() {
		args = append(args, "--admindir="+e.dpkgAdmin())
	} else {
		args = append(args, "--root="+e.cfg.Root)
	}
	args = append(args, "--show", "--showformat=${Package}\\t${db:Status-Abbrev}\\t${Version}\\n", "--")
	args = append(args, names...)
	e.pkgQueries++
	out, stderr, err := e.runPkg(ctx, args)
	if err != nil && !onlyUnknownPackages(err, stderr) {
		return nil, fmt.Errorf("dpkg-query: %w", withOutput(err, stderr))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) != 3 || len(parts[1]) < 2 {
			continue
		}
		// The second letter is the package's status: installed, or only waiting on triggers.
		if s := parts[1][1]; s == 'i' || s == 'W' || s == 't' {
			known[parts[0]] = pkgState{installed: true, version: parts[2]}
		}
	}
	return known, nil
}

// onlyUnknownPackages reports whether dpkg-query failed only because it knows of none of
// some names: it exits 1 and says so for each.
func onlyUnknownPackages(err error, stderr []byte) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		return false
	}
	for line := range strings.Lines(strings.TrimSpace(string(stderr))) {
		if !strings.HasPrefix(line, "dpkg-query: no packages found matching") {
			return false
		}
	}
	return true
}

func (e *Engine) rootIsSlash() bool { return filepath.Clean(e.cfg.Root) == "/" }

// dpkgAdmin is dpkg's admin dir: its database, under the root.
func (e *Engine) dpkgAdmin() string { return filepath.Join(e.cfg.Root, "var/lib/dpkg") }

// dpkg is the dpkg command line for the root: under a root other than /, dpkg installs into it,
// keeps its database and its log there, and runs as someone other than root if need be.
func (e *Engine) dpkg() []string {
	if e.rootIsSlash() {
		return []string{"dpkg", "--force-confdef", "--force-confold"}
	}
	return []string{"dpkg", "--root=" + e.cfg.Root, "--log=" + filepath.Join(e.cfg.Root, "var/log/dpkg.log"),
		"--force-not-root", "--force-confdef", "--force-confold"}
}

// apt is the apt-get command line for the root; under a root other than / apt reads its
// sources, lists and cache there (-o Dir=ROOT), and has dpkg install there.
func (e *Engine) apt() []string {
	args := []string{"apt-get", "-q", "-y", "-o", "DPkg::Options::=--force-confdef", "-o", "DPkg::Options::=--force-confold"}
	if !e.rootIsSlash() {
		args = append(args, "-o", "Dir="+e.cfg.Root,
			"-o", "DPkg::Options::=--root="+e.cfg.Root,
			"-o", "DPkg::Options::=--log="+filepath.Join(e.cfg.Root, "var/log/dpkg.log"),
			"-o", "DPkg::Options::=--force-not-root")
	}
	return args
}

// dpkgAdminDir makes what dpkg needs under a root other than /: its admin dir with an empty
// database, info and updates dirs, and a log dir.
func (e *Engine) dpkgAdminDir() error {
	if e.rootIsSlash() {
		return nil
	}
	admin := e.dpkgAdmin()
	for _, d := range []string{"info", "updates", "triggers"} {
		if err := os.MkdirAll(filepath.Join(admin, d), 0o755); err != nil {
			return fmt.Errorf("dpkg's admin dir: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Join(e.cfg.Root, "var/log"), 0o755); err != nil {
		return fmt.Errorf("dpkg's log dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(admin, "status"), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("dpkg's database: %w", err)
	}
	return f.Close()
}

// packageSource is a source's path under the root.
func (e *Engine) packageSource(source string) (string, error) {
	src, err := under(e.cfg.Root, source)
	if err != nil {
		return "", fmt.Errorf("source: %w", err)
	}
	return src, nil
}

// pkgCommand runs a dpkg or apt command line and returns its standard output; a failure
// carries the end of what it wrote.
func (e *Engine) pkgCommand(ctx context.Context, args []string) ([]byte, error) {
	out, stderr, err := e.runPkg(ctx, args)
	if err != nil {
		return nil, withOutput(err, append(stderr, out...))
	}
	return out, nil
}

// runPkg runs args in its own process group, bounded by the command timeout, without a
// terminal to ask questions on.
func (e *Engine) runPkg(ctx context.Context, args []string) (stdout, stderr []byte, err error) {
	return e.runPkgIn(ctx, e.cfg.Root, args, "")
}

// runPkgInput is runPkg with input on the command's standard input.
func (e *Engine) runPkgInput(ctx context.Context, args []string, input string) (stdout, stderr []byte, err error) {
	return e.runPkgIn(ctx, e.cfg.Root, args, input)
}

// runPkgIn is runPkgInput in dir.
func (e *Engine) runPkgIn(ctx context.Context, dir string, args []string, input string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = commandEnv(map[string]string{"DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"})
	var out bytes.Buffer
	errOut := &tailBuffer{max: maxCaptured}
	cmd.Stdout, cmd.Stderr = &out, errOut
	if input != "" {
		cmd.Stdin = strings.NewReader(input)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%s timed out after %s", args[0], e.cfg.CommandTimeout)
	}
	return out.Bytes(), errOut.b, err
}

// aptFetchVetted downloads into dir what apt would unpack to install target (apt is the
// apt-get command line so far) and vets each file: apt says what it would unpack
// (--simulate), and downloads exactly those versions, checked against its lists.
func (e *Engine) aptFetchVetted(ctx context.Context, apt []string, target, dir string, scripts bool) error {
	out, err := e.pkgCommand(ctx, append(slices.Clip(apt), "--simulate", "install", target))
	if err != nil {
		return err
	}
	var want []string
	for line := range strings.Lines(string(out)) {
		// Inst NAME [VERSION BEING REPLACED] (VERSION RELEASE [ARCH])
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "Inst" {
			continue
		}
		v := f[2]
		if strings.HasPrefix(v, "[") && len(f) > 3 {
			v = f[3]
		}
		want = append(want, f[1]+"="+strings.TrimPrefix(v, "("))
	}
	// apt keeps a download in progress in partial, even when it downloads nothing.
	if err := os.Mkdir(filepath.Join(dir, "partial"), 0o700); err != nil {
		return err
	}
	if len(want) == 0 {
		return nil
	}
	if _, stderr, err := e.runPkgIn(ctx, dir, append(append(e.apt(), "download"), want...), ""); err != nil {
		return fmt.Errorf("apt-get download: %w", withOutput(err, stderr))
	}
	debs, err := filepath.Glob(filepath.Join(dir, "*.deb"))
	if err != nil {
		return err
	}
	for _, deb := range debs {
		if err := e.vetDeb(ctx, deb, scripts); err != nil {
			return fmt.Errorf("%s (for %s): %w", filepath.Base(deb), target, err)
		}
	}
	return nil
}

// debFields parses "Field: value" lines as dpkg-deb --field prints them.
func debFields(out []byte) map[string]string {
	fields := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return fields
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
