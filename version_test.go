package hq

import (
	"runtime/debug"
	"testing"
)

func TestVersionNamesTheModuleVersionAndTheCommit(t *testing.T) {
	const rev = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"(devel)", vcs("false"), "devel-1a2b3c4d5e6f"},
		{"(devel)", vcs("true"), "devel-1a2b3c4d5e6f+modified"},
		{"(devel)", nil, "devel"},
		{"", nil, "devel"},
		{"v0.3.0", vcs("false"), "v0.3.0 (commit 1a2b3c4d5e6f)"},
		{"v0.3.0", nil, "v0.3.0"},
		{"v0.3.1-0.20261207234410-1a2b3c4d5e6f+dirty", vcs("true"), "v0.3.1-0.20261207234410-1a2b3c4d5e6f+dirty"},
	} {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/meshhq/hq", Version: c.main}, Settings: c.settings}
		if got := versionOf(bi); got != c.want {
			t.Errorf("main %q, settings %v: %q, want %q", c.main, c.settings, got, c.want)
		}
	}
	// What this test binary says comes from its build info, whatever that holds.
	bi, _ := debug.ReadBuildInfo()
	if got := Version(); got != versionOf(bi) {
		t.Errorf("Version() = %q, its build info says %q", got, versionOf(bi))
	}
}
