package hq

import (
	"strings"
	"testing"
)

func TestValidateReportHostFacts(t *testing.T) {
	for _, tc := range []struct {
		host *HostFacts
		ok   bool
	}{
		{nil, true},
		{&HostFacts{HostdVersion: "v1", OS: "Debian", Arch: "amd64"}, true},
		{&HostFacts{OS: "Debian", Arch: "amd64"}, false},
		{&HostFacts{HostdVersion: "v1", OS: strings.Repeat("x", MaxHostFact+1)}, false},
		{&HostFacts{HostdVersion: strings.Repeat("1", MaxHostFact+1)}, false},
	} {
		err := ValidateReport(Report{Host: tc.host})
		if (err == nil) != tc.ok {
			t.Errorf("host %+v: %v, want ok=%v", tc.host, err, tc.ok)
		}
	}
}
