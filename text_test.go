package hq

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateText(t *testing.T) {
	if got := TruncateText("short"); got != "short" {
		t.Fatalf("short text changed: %q", got)
	}
	for _, s := range []string{strings.Repeat("x", 10000), strings.Repeat("é", 5000), strings.Repeat("x", MaxText+1)} {
		got := TruncateText(s)
		if len(got) > MaxText || !utf8.ValidString(got) || !strings.Contains(got, "bytes truncated]") {
			t.Fatalf("truncated to %d bytes, valid %v: %q", len(got), utf8.ValidString(got), got[len(got)-40:])
		}
	}
}
