package hq

import "testing"

func TestSymlinkTargetMustStayInside(t *testing.T) {
	for target, ok := range map[string]bool{
		"../../outside": false, "../a.conf": true, "../../a": false, "/etc/x": true, "a/../../..": false, "./x": true, "..": true,
	} {
		err := ValidateModule([]Resource{{Name: "l", Kind: KindSymlink, Path: "/opt/esc", Target: target}})
		if (err == nil) != ok {
			t.Errorf("target %q from /opt: err = %v, want ok=%v", target, err, ok)
		}
	}
}
