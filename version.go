package hq

import "runtime/debug"

// Version says which build this is: the module version it was built as, or for a build from a
// checkout "devel" and the commit ("devel-1a2b3c4d5e6f", with "+modified" when the tree had
// changes the commit does not hold). "devel" alone when the build says neither.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v, modified := "devel", false
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			v = "devel-" + s.Value[:12]
		case s.Key == "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && v != "devel" {
		v += "+modified"
	}
	return v
}

// IsVersionFlag reports whether arg asks a binary for its version.
func IsVersionFlag(arg string) bool {
	return arg == "--version" || arg == "-version" || arg == "version"
}
