package hostd

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// under joins a declared absolute path under the root. The controller validates paths, but
// hostd checks again because a path that escapes the root must never be written.
func under(root, p string) (string, error) {
	// A clean absolute path has no ".." element: Clean removes every one of them. This runs
	// for every declared path of every reconcile, so it does not split p.
	if !strings.HasPrefix(p, "/") || p == "/" || path.Clean(p) != p || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q must be absolute and clean", p)
	}
	return filepath.Join(root, filepath.FromSlash(p)), nil
}

// substitute replaces {root} (and {path}, when path is not empty) in every argument.
func substitute(args []string, root, file string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "{root}", root)
		if file != "" {
			a = strings.ReplaceAll(a, "{path}", file)
		}
		out[i] = a
	}
	return out
}

// fileMode turns permission bits as declared (0o7777) into an fs.FileMode.
func fileMode(bits uint32) fs.FileMode {
	m := fs.FileMode(bits & 0o777)
	if bits&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if bits&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if bits&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// modeBits is the inverse of fileMode.
func modeBits(m fs.FileMode) uint32 {
	bits := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		bits |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	return bits
}

// isUnder reports whether p is strictly inside dir (both spec paths).
func isUnder(p, dir string) bool {
	return strings.HasPrefix(p, dir+"/")
}
