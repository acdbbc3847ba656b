package hostd

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A .deb is vetted before dpkg sees it, for two reasons.
//
// Under a root other than /, dpkg unpacks into the root but through the host's filesystem: a
// link a package ships (or one already in the root) that points outside the root is followed
// by the next file unpacked beneath it, and that file lands outside. So every member's path,
// and every link's target, is resolved as the kernel would resolve it once the package is
// unpacked, through the package's links and the root's, and the package is refused when any
// of them leads outside the root.
//
// Maintainer scripts run as root. dpkg has no way to install a package without running them:
// preinst runs before anything is unpacked, and installing one with its scripts taken out
// would leave dpkg's database saying a package is configured that never was. So a package
// that brings scripts is refused unless its resource allows them ("scripts": true).

// maintainerScripts are the control members run as root: dpkg runs the first four around
// unpacking, configuring and removing a package, and debconf runs config before apt installs it.
var maintainerScripts = []string{"preinst", "postinst", "prerm", "postrm", "config"}

// maxLinkFollows bounds the links followed to resolve one member, as the kernel's bound on
// nested links does; a package that needs more (or has a loop in the way) is refused.
const maxLinkFollows = 64

// vetsDebs reports whether a .deb must be vetted before it is installed: under a root other
// than / for where it writes, and for its scripts unless they are allowed.
func (e *Engine) vetsDebs(scripts bool) bool { return !e.rootIsSlash() || !scripts }

// vetDeb refuses deb when installing it could write outside the root or would run
// maintainer scripts that scripts does not allow.
func (e *Engine) vetDeb(ctx context.Context, deb string, scripts bool) error {
	if !scripts {
		var found []string
		err := e.debMembers(ctx, deb, "--ctrl-tarfile", func(h *tar.Header) error {
			if n := path.Clean(h.Name); slices.Contains(maintainerScripts, n) && h.Typeflag != tar.TypeDir {
				found = append(found, n)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(found) > 0 {
			return fmt.Errorf(`has maintainer scripts (%s), which run as root: refused unless the resource sets "scripts": true`, strings.Join(found, ", "))
		}
	}
	if e.rootIsSlash() {
		return nil // everything is inside /
	}
	return e.debStaysInRoot(ctx, deb)
}

// debStaysInRoot refuses deb when unpacking it under the root could write outside it.
func (e *Engine) debStaysInRoot(ctx context.Context, deb string) error {
	if e.confiner.err != nil {
		return e.confiner.err
	}
	w := &rootWalk{root: e.confiner.root, roots: []string{e.confiner.root, e.confiner.real},
		pkg: map[string][]string{}, disk: map[string]diskLink{}}
	// Members are checked once every link the package ships is known.
	type member struct{ name, hardlink string }
	var members []member
	err := e.debMembers(ctx, deb, "--fsys-tarfile", func(h *tar.Header) error {
		name, ok := memberPath(h.Name)
		if !ok {
			return fmt.Errorf("member %q has '..' in its path", h.Name)
		}
		if name == "" {
			return nil // the root itself
		}
		m := member{name: name}
		switch h.Typeflag {
		case tar.TypeChar, tar.TypeBlock:
			// A device node under the root reaches whatever device it names, outside the root.
			return fmt.Errorf("/%s is a device node: not under a HOSTD_ROOT other than /", name)
		case tar.TypeSymlink:
			if strings.ContainsRune(h.Linkname, 0) {
				return fmt.Errorf("/%s is a symbolic link with a NUL in its target", name)
			}
			if !slices.Contains(w.pkg[name], h.Linkname) {
				w.pkg[name] = append(w.pkg[name], h.Linkname)
			}
		case tar.TypeLink:
			if m.hardlink, ok = memberPath(h.Linkname); !ok || m.hardlink == "" {
				return fmt.Errorf("/%s is a hard link to %q, which has '..' in its path", name, h.Linkname)
			}
		}
		members = append(members, m)
		return nil
	})
	if err != nil {
		return err
	}
	for _, m := range members {
		if err := w.check(m.name, "/"+m.name); err != nil {
			return err
		}
		if m.hardlink != "" {
			if err := w.check(m.hardlink, fmt.Sprintf("/%s (a hard link to /%s)", m.name, m.hardlink)); err != nil {
				return err
			}
		}
	}
	return nil
}

// memberPath is a data member's path relative to the root ("" for the root itself), as dpkg
// joins it under the root; false when it has a ".." element, which no package needs.
func memberPath(name string) (string, bool) {
	p := strings.Trim(path.Clean("/"+strings.TrimPrefix(name, "./")), "/")
	for el := range strings.SplitSeq(name, "/") {
		if el == ".." {
			return "", false
		}
	}
	return p, true
}

// rootWalk resolves paths under the root as the kernel will once a package is unpacked: a
// link the package ships and one already in the root both count, since dpkg replaces some
// links and keeps others (a link to a directory where the package has that directory), and
// unpacks members in the archive's order, so either may be in the way when a member is
// written. Every way a path may go is followed; none may leave the root.
type rootWalk struct {
	// root is HOSTD_ROOT, where the root's links are read; an absolute link target is inside
	// when it is under one of roots (HOSTD_ROOT as configured and resolved).
	root  string
	roots []string
	// pkg maps each link the package ships (a path relative to the root) to its targets: an
	// archive may name one path more than once.
	pkg map[string][]string
	// disk caches what is in the root at a path: a link, and its target.
	disk    map[string]diskLink
	follows int
}

type diskLink struct {
	link   bool
	target string
}

// link is one link on the way, for errors: where it is, what it points to, whose it is.
type link struct {
	at, target string
	onNode     bool
}

// check refuses rel (a member's path relative to the root) when it, or what it links to,
// may resolve outside the root; what names it in errors.
func (w *rootWalk) check(rel, what string) error {
	w.follows = 0
	_, out, err := w.resolve(nil, strings.Split(rel, "/"), nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if out == nil {
		return nil
	}
	whose := "in the package"
	if out.onNode {
		whose = "on this node"
	}
	if out.at == rel {
		if out.onNode {
			return fmt.Errorf("%s is a symbolic link on this node to %s, outside HOSTD_ROOT", what, out.target)
		}
		return fmt.Errorf("%s is a symbolic link to %s, outside HOSTD_ROOT", what, out.target)
	}
	return fmt.Errorf("%s would be written through /%s, a symbolic link %s to %s, outside HOSTD_ROOT", what, out.at, whose, out.target)
}

// resolve follows els from dir (both relative to the root, as elements) and returns every
// place they may lead to, or the link that leads outside the root. via is the link whose
// target els are, blamed when a ".." climbs above the root.
func (w *rootWalk) resolve(dir, els []string, via *link) ([][]string, *link, error) {
	places := [][]string{dir}
	for _, el := range els {
		if el == "" || el == "." {
			continue
		}
		var next [][]string
		for _, d := range places {
			if el == ".." {
				if len(d) == 0 {
					if via == nil {
						return nil, nil, errors.New("climbs above the root")
					}
					return nil, via, nil
				}
				next = append(next, d[:len(d)-1:len(d)-1])
				continue
			}
			p := append(d[:len(d):len(d)], el)
			links, plain, err := w.lookup(p)
			if err != nil {
				return nil, nil, err
			}
			if plain {
				next = append(next, p)
			}
			for _, l := range links {
				if w.follows++; w.follows > maxLinkFollows {
					return nil, nil, errors.New("too many levels of symbolic links")
				}
				start, tels, inside := d, strings.Split(l.target, "/"), true
				if path.IsAbs(l.target) {
					start, tels, inside = nil, nil, false
					t := path.Clean(l.target)
					for _, r := range w.roots {
						if within(r, t) {
							start, tels, inside = nil, strings.Split(strings.TrimPrefix(t, r), "/"), true
							break
						}
					}
				}
				if !inside {
					return nil, &l, nil
				}
				ends, out, err := w.resolve(start, tels, &l)
				if out != nil || err != nil {
					return nil, out, err
				}
				next = append(next, ends...)
			}
		}
		places = distinct(next)
	}
	return places, nil, nil
}

// lookup says what p (elements relative to the root, each before it a directory on the way)
// may be once the package is unpacked: the links that may be there, and plain when it may be
// no link at all (nothing on the machine, or no link there yet).
func (w *rootWalk) lookup(p []string) ([]link, bool, error) {
	rel := strings.Join(p, "/")
	d, ok := w.disk[rel]
	if !ok {
		// Only what p's own name is matters: every element before it is a directory on the
		// way, not a link, so Lstat follows nothing.
		fi, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel)))
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			t, err := os.Readlink(filepath.Join(w.root, filepath.FromSlash(rel)))
			if err != nil {
				return nil, false, err
			}
			d = diskLink{link: true, target: t}
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return nil, false, err
		}
		w.disk[rel] = d
	}
	var links []link
	if d.link {
		links = append(links, link{at: rel, target: d.target, onNode: true})
	}
	for _, t := range w.pkg[rel] {
		if !d.link || t != d.target {
			links = append(links, link{at: rel, target: t})
		}
	}
	return links, !d.link, nil
}

// distinct drops repeated places.
func distinct(places [][]string) [][]string {
	if len(places) < 2 {
		return places
	}
	seen := map[string]bool{}
	out := places[:0]
	for _, p := range places {
		k := strings.Join(p, "/")
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}

// debMembers reads one of deb's archives as dpkg-deb writes it out as a tar stream (part is
// --ctrl-tarfile or --fsys-tarfile) and calls each for every member, without writing
// anything to disk; an error from each stops it.
func (e *Engine) debMembers(ctx context.Context, deb, part string, each func(*tar.Header) error) error {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.CommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dpkg-deb", part, deb)
	cmd.Env = commandEnv(map[string]string{"LC_ALL": "C"})
	errOut := &tailBuffer{max: maxCaptured}
	cmd.Stderr = errOut
	cmd.WaitDelay = time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(out)
	var stop error
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			stop = fmt.Errorf("dpkg-deb %s: %w", part, err)
			break
		}
		if stop = each(h); stop != nil {
			break
		}
	}
	if stop != nil {
		cancel() // what is left of the archive does not matter
		_ = cmd.Wait()
		return stop
	}
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("dpkg-deb timed out after %s", e.cfg.CommandTimeout)
		}
		return fmt.Errorf("dpkg-deb %s: %w", part, withOutput(err, errOut.b))
	}
	return nil
}

// copyInto copies src into dir, under its own name, and returns the copy's path: what is
// vetted and then installed is one file no one else writes to.
func copyInto(src, dir string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	dst := filepath.Join(dir, filepath.Base(src))
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}
