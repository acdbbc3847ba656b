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

// A result's container status is refused, with the field named, unless it has an id, bounded
// texts, a health of the three and no negative restarts.
func TestValidateReportContainerStatus(t *testing.T) {
	for _, tc := range []struct {
		c  *ContainerStatus
		ok bool
	}{
		{nil, true},
		{&ContainerStatus{ID: "4f1c", ImageDigest: "sha256:ab", Health: HealthHealthy, Spec: "sha256:cd", Restarts: 3}, true},
		{&ContainerStatus{ID: "4f1c", Health: HealthNone}, true},
		{&ContainerStatus{Health: HealthNone}, false},
		{&ContainerStatus{ID: "4f1c", Health: "fine"}, false},
		{&ContainerStatus{ID: "4f1c", Health: HealthUnhealthy, Restarts: -1}, false},
		{&ContainerStatus{ID: strings.Repeat("a", MaxContainerText+1), Health: HealthNone}, false},
		{&ContainerStatus{ID: "4f1c", Health: HealthNone, Spec: strings.Repeat("a", MaxContainerText+1)}, false},
	} {
		rep := Report{Results: []Result{{Module: "app", Resource: "web", Outcome: StateApplied, Container: tc.c}}}
		err := ValidateReport(rep)
		if (err == nil) != tc.ok {
			t.Errorf("container %+v: %v, want ok=%v", tc.c, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.(*Error).Details[0].Field, "results[0].container") {
			t.Errorf("container %+v: %v names %q", tc.c, err, err.(*Error).Details[0].Field)
		}
	}
}

func TestValidateReportHeldFound(t *testing.T) {
	for _, tc := range []struct {
		outcome State
		f       *FoundFile
		ok      bool
	}{
		{StateHeld, nil, true},
		{StateHeld, &FoundFile{Text: "theirs\n"}, true},
		{StateHeld, &FoundFile{}, true}, // an empty file
		{StateHeld, &FoundFile{Omitted: FoundBinary}, true},
		{StateHeld, &FoundFile{Omitted: FoundTooLarge}, true},
		{StateHeld, &FoundFile{Omitted: FoundTooMany}, true},
		{StateHeld, &FoundFile{Omitted: "secret"}, false},
		{StateHeld, &FoundFile{Text: "x", Omitted: FoundBinary}, false},
		{StateApplied, &FoundFile{Text: "x"}, false},
	} {
		rep := Report{Results: []Result{{Module: "app", Resource: "conf", Outcome: tc.outcome, HeldFound: tc.f}}}
		err := ValidateReport(rep)
		if (err == nil) != tc.ok {
			t.Errorf("%s with %+v: %v, want ok=%v", tc.outcome, tc.f, err, tc.ok)
		}
		if err != nil && err.(*Error).Details[0].Field != "results[0].held_found" {
			t.Errorf("%s with %+v: %v names %q", tc.outcome, tc.f, err, err.(*Error).Details[0].Field)
		}
	}
}
