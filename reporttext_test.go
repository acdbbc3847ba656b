package hq

import (
	"fmt"
	"os"
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

// docTexts reads the fields and bounds of docs/security.md's table of report texts.
func docTexts(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "<!-- texts:")
	table, _, ok2 := strings.Cut(table, "<!-- end texts -->")
	if !ok || !ok2 {
		t.Fatal("docs/security.md has no table of report texts")
	}
	fields := map[string]string{}
	for line := range strings.SplitSeq(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		fields[strings.Trim(strings.TrimSpace(cells[1]), "`")] = strings.TrimSpace(cells[2])
	}
	return fields
}

// Every text a report carries is in the security document's table, every field of the table is
// one, and each is stored clean and within its bound whatever a node sends in it.
func TestSecurityDocListsEveryReportText(t *testing.T) {
	documented := docTexts(t)
	hostile := strings.Repeat("\x00\xff\xfe"+"ü", 7<<20/5)
	rep := Report{Results: []Result{{Container: &ContainerStatus{}, HeldFound: &FoundFile{}}}, Refused: &Refusal{}, Transport: &TransportRefusal{}, Host: &HostFacts{}}
	visited := map[string]bool{}
	rep.Texts(func(field string, s *string) {
		visited[field] = true
		*s = hostile
	})
	rep.BoundText()
	rep.Texts(func(field string, s *string) {
		// What a host says of itself is refused past its bound (ValidateReport) before it
		// is cleaned; every other text is cut.
		want, bound := "2 KiB", MaxText
		switch {
		case strings.HasPrefix(field, "host."):
			want, bound = fmt.Sprintf("%d bytes", MaxHostFact), MaxHostFact
		case strings.HasPrefix(field, "results[].container."):
			want, bound = fmt.Sprintf("%d bytes", MaxContainerText), MaxContainerText
		case field == "results[].drift_found" || field == "results[].held_found.text":
			want, bound = "16 KiB", MaxDriftFound
		}
		if documented[field] != want || MaxText != 2<<10 || MaxDriftFound != 16<<10 {
			t.Errorf("%s: bound %q in docs/security.md, %d bytes in code", field, documented[field], bound)
		}
		if len(*s) > textBound(field) || !utf8.ValidString(*s) || strings.ContainsRune(*s, 0) {
			t.Errorf("%s: stored %d bytes, valid UTF-8 %v, NUL %v", field, len(*s), utf8.ValidString(*s), strings.ContainsRune(*s, 0))
		}
	})
	for field := range documented {
		if !visited[field] {
			t.Errorf("docs/security.md lists %s, which no report carries", field)
		}
	}
}

// A NUL or a byte that is not UTF-8 is replaced, and the rest of the text kept.
func TestCleanTextReplacesWhatTheDatabaseCannotShow(t *testing.T) {
	for in, want := range map[string]string{
		"plain":          "plain",
		"exit\x00status": "exit\uFFFDstatus",
		"bad \xff byte":  "bad \uFFFD byte",
		"ünïcode":        "ünïcode",
		"":               "",
	} {
		if got := CleanText(in); got != want {
			t.Errorf("CleanText(%q) = %q, want %q", in, got, want)
		}
	}
}
