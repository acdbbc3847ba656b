package hq

import (
	"strings"
	"testing"
)

// FuzzValidName: a valid name never holds a path separator or starts with punctuation.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"web-1", "../x", "a/b", ".hidden", "", "x.y_z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidName(s) {
			return
		}
		for _, c := range s {
			if c == '/' || c == 0 || c == ' ' {
				t.Fatalf("%q accepted", s)
			}
		}
		if s[0] == '.' || s[0] == '-' || len(s) > MaxNameLen {
			t.Fatalf("%q accepted", s)
		}
	})
}

// FuzzImageReference: an image accepted is a name in a registry pinned by one digest. Nothing
// before its first ':' can be read as a transport (podman's are single words: "oci-archive",
// "dir", "containers-storage", "docker", "sif", …), whatever the input.
func FuzzImageReference(f *testing.F) {
	const d = "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, s := range []string{"app" + d, "localhost/app" + d, "127.0.0.1:5000/app" + d, "registry.example/a/b:1" + d,
		"oci-archive:x" + d, "dir:x" + d, "containers-storage:x" + d, "docker://x/y" + d, "docker-archive:/x.tar" + d,
		"sif:5000/x" + d, "x:1" + d, "localhost:5000/x" + d, "a@b" + d, "oci:x:y" + d, "dir:./x" + d, "\x00" + d} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if imageProblem(s) != "" {
			return
		}
		name, digest, _ := strings.Cut(s, "@")
		if strings.Contains(digest, "@") || !imageDigest().MatchString(digest) {
			t.Fatalf("%q accepted with digest %q", s, digest)
		}
		if strings.ContainsAny(name, " \t\n\x00\\") || strings.Contains(name, "//") || strings.HasPrefix(name, "/") || strings.HasPrefix(name, ".") {
			t.Fatalf("%q accepted", s)
		}
		// A ':' before any '/' is a registry's port, and a '/' follows it.
		if prefix, _, colon := strings.Cut(name, ":"); colon && !strings.ContainsRune(prefix, '/') {
			if !strings.ContainsRune(name, '/') || !strings.ContainsRune(prefix, '.') && prefix != "localhost" {
				t.Fatalf("%q accepted: %q before its first ':' is no registry's host", s, prefix)
			}
		}
	})
}
