package webui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"both empty", "", "", ""},
		{"identical", "a\nb\n", "a\nb\n", ""},
		{"from empty", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"to empty", "a\nb\n", "", "@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"all changed", "a\nb\n", "c\nd\n", "@@ -1,2 +1,2 @@\n-a\n-b\n+c\n+d\n"},
		{"one line", "a\n", "b\n", "@@ -1 +1 @@\n-a\n+b\n"},
		{"in the middle, with three lines of context", lines(1, 10), strings.Replace(lines(1, 10), "line 5\n", "five\n", 1),
			"@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n"},
		{"a line added at the end", lines(1, 5), lines(1, 6), "@@ -3,3 +3,4 @@\n line 3\n line 4\n line 5\n+line 6\n"},
		{"a line removed at the start", lines(1, 5), lines(2, 5), "@@ -1,4 +1,3 @@\n-line 1\n line 2\n line 3\n line 4\n"},
		{"two changes far apart: two hunks", lines(1, 20), strings.Replace(strings.Replace(lines(1, 20), "line 2\n", "two\n", 1), "line 18\n", "eighteen\n", 1),
			"@@ -1,5 +1,5 @@\n line 1\n-line 2\n+two\n line 3\n line 4\n line 5\n" +
				"@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+eighteen\n line 19\n line 20\n"},
		{"two changes six lines apart: one hunk", lines(1, 12), strings.Replace(strings.Replace(lines(1, 12), "line 3\n", "three\n", 1), "line 10\n", "ten\n", 1),
			"@@ -1,12 +1,12 @@\n line 1\n line 2\n-line 3\n+three\n line 4\n line 5\n line 6\n line 7\n line 8\n line 9\n-line 10\n+ten\n line 11\n line 12\n"},
		{"no newline at the end", "a\nb", "a\nc", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"a newline added at the end", "a", "a\n", "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"moved line", "a\nb\nc\n", "b\nc\na\n", "@@ -1,3 +1,3 @@\n-a\n b\n c\n+a\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := unifiedDiff(tc.a, tc.b)
			got := d.String("a", "b")
			want := ""
			if tc.want != "" {
				want = "--- a\n+++ b\n" + tc.want
			}
			if got != want {
				t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
			}
			if d.Same() != (tc.want == "") || d.Cut != "" || d.Skipped != "" {
				t.Fatalf("same %v, cut %q, skipped %q", d.Same(), d.Cut, d.Skipped)
			}
			if b := patch(t, tc.a, d); b != tc.b {
				t.Fatalf("the diff applied to a gives %q, want %q", b, tc.b)
			}
		})
	}
}

// A text above the bound is not compared line by line, and the diff says so; one at the bound
// is.
func TestUnifiedDiffSizeBound(t *testing.T) {
	at := strings.Repeat("x", maxDiffText-1) + "\n"
	if d := unifiedDiff(at, strings.Repeat("x", maxDiffText-2)+"y\n"); d.Skipped != "" || len(d.Hunks) != 1 {
		t.Fatalf("at the bound: skipped %q, %d hunks", d.Skipped, len(d.Hunks))
	}
	over := at + "y\n"
	d := unifiedDiff(at, over)
	if d.Skipped == "" || len(d.Hunks) != 0 || d.Same() {
		t.Fatalf("above the bound: %+v", d)
	}
	if want := "diff not shown: 64 KiB against 64 KiB, too large to show (texts up to 64 KiB are compared); 1 line(s) differ"; d.Skipped != want {
		t.Fatalf("skipped %q, want %q", d.Skipped, want)
	}
	if d := unifiedDiff(over, over); !d.Same() {
		t.Fatalf("two equal texts above the bound differ: %+v", d)
	}
}

// One diff shows at most maxDiffLines lines, and says how many it leaves out; a page shows at
// most maxPageDiff bytes of diffs, and a diff past that is a summary.
func TestUnifiedDiffIsCut(t *testing.T) {
	var a, b strings.Builder
	for i := range 2 * maxDiffLines {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	d := unifiedDiff(a.String(), b.String())
	shown := 0
	for _, h := range d.Hunks {
		shown += len(h.Lines)
	}
	if shown != maxDiffLines || !strings.HasPrefix(d.Cut, fmt.Sprintf("%d more lines of this diff not shown", 3*maxDiffLines)) {
		t.Fatalf("%d lines shown, cut %q", shown, d.Cut)
	}
	page := newDiffBudget(maxDiffText)
	page.left = 100
	if d := page.diff("a\n", "b\n"); len(d.Hunks) != 1 || d.Cut != "" || page.left != 94 {
		t.Fatalf("within the page's budget: %+v, %d left", d, page.left)
	}
	page.left = 5
	if d := page.diff("a\nb\n", "c\nd\n"); len(d.Hunks) != 1 || len(d.Hunks[0].Lines) != 2 || !strings.HasPrefix(d.Cut, "2 more lines") {
		t.Fatalf("the page's budget spent within a diff: %+v", d)
	}
	page.left = 0
	if d := page.diff("a\nb\n", "c\nb\n"); d.Skipped != "diff not shown: the page shows at most 256 KiB of diffs; 2 line(s) differ" {
		t.Fatalf("past the page's budget: %+v", d)
	}
}

// On random texts the diff turns a into b.
func TestUnifiedDiffApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(string(rune('a'+r.IntN(3))) + "\n")
		}
		if r.IntN(4) == 0 {
			b.WriteString("z")
		}
		return b.String()
	}
	for range 2000 {
		a, b := text(), text()
		if got := patch(t, a, unifiedDiff(a, b)); got != b {
			t.Fatalf("%q → %q: the diff gives %q", a, b, got)
		}
	}
}

// splitLines cuts a text into lines, each with its newline.
func splitLines(s string) []string { return slices.Collect(strings.Lines(s)) }

// patch applies a diff's hunks to a, checking that every context and deleted line is what a
// has there.
func patch(t *testing.T, a string, d textDiff) string {
	t.Helper()
	la := splitLines(a)
	var out []string
	next := 0 // the next line of a not yet copied
	for _, h := range d.Hunks {
		start := h.OldStart - 1
		out = append(out, la[next:start]...)
		next = start
		for _, l := range h.Lines {
			text := l.Text
			if !l.NoNewline {
				text += "\n"
			}
			switch l.Op {
			case opInsert:
				out = append(out, text)
			default:
				if next >= len(la) || la[next] != text {
					t.Fatalf("hunk %s: line %d of a is not %q", h.Header(), next+1, text)
				}
				if l.Op == opEqual {
					out = append(out, text)
				}
				next++
			}
		}
	}
	return strings.Join(append(out, la[next:]...), "")
}
