// Package debversion is the grammar of a Debian package version, [epoch:]upstream[-revision],
// as Debian Policy gives it: what a package resource may ask dpkg and apt for. It checks the
// form only; it does not order versions.
package debversion

import "strings"

// Valid reports whether s is a Debian version (Debian Policy 5.6.12):
// [epoch:]upstream[-revision], an epoch of digits, an upstream version that starts with a
// digit and holds letters, digits, '.', '+', '~' and '-' (a '-' only when a revision follows
// the last one), a revision of letters, digits, '.', '+' and '~'.
func Valid(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	if epoch, rest, ok := strings.Cut(s, ":"); ok {
		if epoch == "" || strings.Trim(epoch, "0123456789") != "" {
			return false
		}
		s = rest
	}
	upstream, revision := s, ""
	if i := strings.LastIndexByte(s, '-'); i >= 0 {
		upstream, revision = s[:i], s[i+1:]
		if revision == "" || !versionChars(revision, ".+~") {
			return false
		}
	}
	return upstream != "" && upstream[0] >= '0' && upstream[0] <= '9' && versionChars(upstream, ".+~-")
}

func versionChars(s, extra string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(extra, c)) {
			return false
		}
	}
	return true
}
