package webui

import (
	"fmt"
	"math/rand/v2"
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
			if d.Same() != (tc.want == "") || d.Coarse || d.Skipped != "" {
				t.Fatalf("same %v, coarse %v, skipped %q", d.Same(), d.Coarse, d.Skipped)
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
	if want := fmt.Sprintf("not compared line by line: %d bytes before, %d after; texts up to 64 KiB are", len(at), len(over)); d.Skipped != want {
		t.Fatalf("skipped %q, want %q", d.Skipped, want)
	}
	if d := unifiedDiff(over, over); d.Skipped == "" {
		t.Fatal("two equal texts above the bound were compared")
	}
}

// Past maxDiffEdits the changed middle is one replacement: still a diff that turns a into b,
// with the common start and end as context.
func TestUnifiedDiffGivesUpToAReplacement(t *testing.T) {
	var a, b strings.Builder
	a.WriteString("head\n")
	b.WriteString("head\n")
	for i := range maxDiffEdits {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	a.WriteString("tail\n")
	b.WriteString("tail\n")
	d := unifiedDiff(a.String(), b.String())
	if !d.Coarse || len(d.Hunks) != 1 {
		t.Fatalf("coarse %v, %d hunks", d.Coarse, len(d.Hunks))
	}
	h := d.Hunks[0]
	if h.Header() != fmt.Sprintf("@@ -1,%d +1,%d @@", maxDiffEdits+2, maxDiffEdits+2) {
		t.Fatalf("header %s", h.Header())
	}
	if h.Lines[0].Op != opEqual || h.Lines[1].Op != opDelete || h.Lines[maxDiffEdits+1].Op != opInsert || h.Lines[len(h.Lines)-1].Op != opEqual {
		t.Fatal("not the head, every old line, every new line, the tail")
	}
	if got := patch(t, a.String(), d); got != b.String() {
		t.Fatal("the replacement does not turn a into b")
	}
	// Within the bound the same kind of change is aligned.
	if d := unifiedDiff("head\nold\ntail\n", "head\nnew\ntail\n"); d.Coarse {
		t.Fatal("a small change gave up")
	}
}

// On random texts the diff turns a into b with the fewest edits: as many as the lengths less
// twice the longest common subsequence.
func TestUnifiedDiffIsShortest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(string(rune('a'+r.IntN(3))) + "\n")
		}
		return b.String()
	}
	for range 2000 {
		a, b := text(), text()
		la, lb := splitLines(a), splitLines(b)
		ops, ok := myers(la, lb, maxDiffEdits)
		if !ok {
			t.Fatalf("%q → %q gave up", a, b)
		}
		edits := 0
		for _, op := range ops {
			if op != opEqual {
				edits++
			}
		}
		if want := len(la) + len(lb) - 2*lcs(la, lb); edits != want {
			t.Fatalf("%q → %q: %d edits, want %d", a, b, edits, want)
		}
		if got := patch(t, a, unifiedDiff(a, b)); got != b {
			t.Fatalf("%q → %q: the diff gives %q", a, b, got)
		}
	}
}

func lcs(a, b []string) int {
	m := make([][]int, len(a)+1)
	for i := range m {
		m[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				m[i][j] = m[i+1][j+1] + 1
			} else {
				m[i][j] = max(m[i+1][j], m[i][j+1])
			}
		}
	}
	return m[0][0]
}

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
