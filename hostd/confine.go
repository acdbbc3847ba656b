package hostd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// confiner keeps what hostd changes inside the root when symlinks are in the way. under is
// lexical: a symlink in a parent directory (declared, or already on the machine) could still
// lead a write or a removal outside. So before hostd touches a target it resolves the real path
// of the target's parent directory and refuses it unless it is under the root, resolved too.
// The target itself is never followed: rename, remove and lstat act on a link, not through it.
//
// A reconcile keeps one confiner. Resolutions for checks are cached, so a converged node pays
// for one per directory, not one per file; every check made before a change is made afresh and
// empties the cache, since a change (or a command hostd runs) may swap a directory for a link.
type confiner struct {
	// root is HOSTD_ROOT as configured; real is it resolved, or err why it could not be.
	root, real string
	err        error
	cache      map[string]string
}

func newConfiner(root string) *confiner {
	c := &confiner{root: filepath.Clean(root), cache: map[string]string{}}
	c.real, c.err = realPath(c.root)
	if c.err != nil {
		c.err = fmt.Errorf("resolving HOSTD_ROOT: %w", c.err)
	}
	return c
}

// check refuses abs (a path under the root) when its parent directory resolves outside the
// root. Unless cached is set it resolves afresh and forgets every earlier resolution.
func (c *confiner) check(abs string, cached bool) error {
	if c.err != nil {
		return c.err
	}
	dir := filepath.Dir(abs)
	real, ok := "", false
	if cached {
		real, ok = c.cache[dir]
	} else {
		clear(c.cache)
	}
	if !ok {
		var err error
		if real, err = realPath(dir); err != nil {
			return err
		}
		c.cache[dir] = real
	}
	if !within(c.real, real) {
		return fmt.Errorf("%s resolves outside HOSTD_ROOT (to %s)", c.spec(dir), real)
	}
	return nil
}

// resolved is abs with its parent directory resolved as the last check of abs found it.
func (c *confiner) resolved(abs string) string {
	parent := filepath.Dir(abs)
	dir, ok := c.cache[parent]
	if !ok || dir == parent {
		return abs
	}
	return filepath.Join(dir, filepath.Base(abs))
}

// forget drops every cached resolution: something may have changed the machine.
func (c *confiner) forget() { clear(c.cache) }

// spec is dir as the declaration names it, for errors.
func (c *confiner) spec(dir string) string {
	if c.root == "/" {
		return dir
	}
	if rest, ok := strings.CutPrefix(dir, c.root); ok && (rest == "" || rest[0] == '/') {
		if rest == "" {
			return "/"
		}
		return rest
	}
	return dir
}

// linkTarget checks a symlink's target as hostd writes it (written: an absolute one already
// joined under the root; declared is for the error): resolved lexically against the link's
// directory, it must stay under the root. Where it leads through other links is checked when
// something is written through it.
func (c *confiner) linkTarget(abs, declared, written string) error {
	t := written
	if !filepath.IsAbs(t) {
		t = filepath.Join(filepath.Dir(abs), t)
	}
	if !within(c.root, filepath.Clean(t)) {
		return fmt.Errorf("symlink target %q of %s resolves outside HOSTD_ROOT", declared, c.spec(abs))
	}
	return nil
}

// realPath resolves every symlink in p. When p does not exist (yet), its deepest existing
// ancestor is resolved and the rest appended: where hostd would create it. A link in the way
// whose target does not exist is refused, since what would be created through it is unknown.
func realPath(p string) (string, error) {
	var rest []string
	for d := p; ; {
		real, err := filepath.EvalSymlinks(d)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(d); lerr == nil {
			return "", fmt.Errorf("%s is a symlink to a path that does not exist", d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", err
		}
		rest = append(rest, filepath.Base(d))
		d = parent
	}
}

// within reports whether p is root or inside it (both clean, absolute).
func within(root, p string) bool {
	// Without concatenating root+"/": this runs for every declared path of every reconcile.
	return root == "/" || strings.HasPrefix(p, root) && (len(p) == len(root) || p[len(root)] == '/')
}
