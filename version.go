package hq

import (
	"runtime/debug"
	"strings"
)

// Version says which build this is, from what Go recorded in the binary: the module version
// it was built as, and the commit when the build recorded one and the version does not hold
// it ("v0.3.0 (commit 1a2b3c4d5e6f)"); for a build from a checkout "devel" and the commit
// ("devel-1a2b3c4d5e6f"). "+modified" says the tree had changes the commit does not hold.
// "devel" alone when the build says neither (a build with -buildvcs=false, or from a tree
// that is not a repository).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) string {
	rev, modified := "", false
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		rev += "+modified"
	}
	v := bi.Main.Version
	switch {
	case v == "" || v == "(devel)":
		if rev == "" {
			return "devel"
		}
		return "devel-" + rev
	case rev != "" && !strings.Contains(v, strings.TrimSuffix(rev, "+modified")):
		// A tagged build names its tag alone; the commit tells two builds of it apart.
		return v + " (commit " + rev + ")"
	}
	return v
}

// IsVersionFlag reports whether arg asks a binary for its version.
func IsVersionFlag(arg string) bool {
	return arg == "--version" || arg == "-version" || arg == "version"
}
