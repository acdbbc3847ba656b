package webui

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// A line-based unified diff, as diff -u prints it, for the contents of text files. The lines
// are aligned by go-udiff, a maintained port of the Go team's own diff package whose alignment
// bounds its work and gives a true, if not the shortest, diff past it. What a page shows is
// bounded here: texts above maxDiffText are summarised, not compared; one diff shows at most
// maxDiffLines lines; and a page shows at most maxPageDiff bytes of diff lines, all diffs
// together, so a node or an upload decides neither how long a page takes nor how large it is.

const (
	// maxDiffText bounds each side of a content diff between revisions; a drift's diff is
	// bounded by what hostd sends of a file it found, hq.MaxDriftFound.
	maxDiffText = 64 << 10
	// maxDiffLines bounds the lines one diff shows.
	maxDiffLines = 500
	// maxPageDiff bounds the bytes of diff lines one page shows.
	maxPageDiff = 256 << 10
	// maxCountedText bounds the texts whose differing lines a summary counts.
	maxCountedText = 4 << 20
	// diffContext is how many unchanged lines surround each change.
	diffContext = 3
)

// diffOp is what a line of a diff does, as its first character says it.
type diffOp byte

const (
	opEqual  diffOp = ' '
	opDelete diffOp = '-'
	opInsert diffOp = '+'
)

// diffLine is one line of a hunk, without its newline; NoNewline marks the last line of a
// text that does not end with one.
type diffLine struct {
	Op        diffOp
	Text      string
	NoNewline bool
}

// Sign is the line's first character, for the template.
func (l diffLine) Sign() string { return string(l.Op) }

// Class names the line's kind for the page's colours.
func (l diffLine) Class() string {
	switch l.Op {
	case opDelete:
		return "del"
	case opInsert:
		return "add"
	}
	return "ctx"
}

// hunk is a run of changes with their context; starts count from 1, as diff -u's do.
type hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Lines              []diffLine
}

// Header is the hunk's @@ line. A side with no lines names the line before it, and a count of
// one is left out, as diff -u writes them.
func (h hunk) Header() string {
	return fmt.Sprintf("@@ -%s +%s @@", hunkRange(h.OldStart, h.OldLines), hunkRange(h.NewStart, h.NewLines))
}

func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// textDiff is the difference between two texts.
type textDiff struct {
	Hunks []hunk
	// Skipped says why the texts were not compared line by line; then there are no hunks.
	Skipped string
	// Cut says that the diff shows only its first lines, and how many it leaves out.
	Cut string
}

// Same reports whether the diff found the texts equal.
func (d textDiff) Same() bool { return d.Skipped == "" && len(d.Hunks) == 0 }

// diffBudget is what a page may still show of diffs: the bytes of their lines; and the
// largest text it compares.
type diffBudget struct {
	left    int
	maxText int
}

func newDiffBudget(maxText int) *diffBudget { return &diffBudget{left: maxPageDiff, maxText: maxText} }

// unifiedDiff compares two texts line by line, as one page's only diff.
func unifiedDiff(a, b string) textDiff { return newDiffBudget(maxDiffText).diff(a, b) }

// diff compares two texts line by line and takes what it shows from the page's budget. Texts
// too large, or a page whose budget is spent, get a summary instead.
func (p *diffBudget) diff(a, b string) textDiff {
	switch {
	case a == b:
		return textDiff{}
	case len(a) > p.maxText || len(b) > p.maxText:
		return textDiff{Skipped: fmt.Sprintf("diff not shown: %s against %s, too large to show (texts up to %d KiB are compared)%s",
			sizeText(len(a)), sizeText(len(b)), p.maxText>>10, linesDiffer(a, b))}
	case p.left <= 0:
		return textDiff{Skipped: fmt.Sprintf("diff not shown: the page shows at most %d KiB of diffs%s", maxPageDiff>>10, linesDiffer(a, b))}
	}
	u, err := udiff.ToUnifiedDiff("", "", a, udiff.Lines(a, b), diffContext)
	if err != nil { // the library's own edits always apply
		return textDiff{Skipped: "diff not shown: " + err.Error()}
	}
	var d textDiff
	shown, total := 0, 0
	for _, uh := range u.Hunks {
		total += len(uh.Lines)
		if shown >= maxDiffLines || p.left <= 0 {
			continue
		}
		h := hunk{OldStart: uh.FromLine, NewStart: uh.ToLine}
		for _, l := range uh.Lines {
			if shown >= maxDiffLines || p.left <= 0 {
				break // the hunk ends here: its counts say what it shows
			}
			text, eol := strings.CutSuffix(l.Content, "\n")
			line := diffLine{Text: text, NoNewline: !eol}
			switch l.Kind {
			case udiff.Delete:
				line.Op, h.OldLines = opDelete, h.OldLines+1
			case udiff.Insert:
				line.Op, h.NewLines = opInsert, h.NewLines+1
			default:
				line.Op, h.OldLines, h.NewLines = opEqual, h.OldLines+1, h.NewLines+1
			}
			h.Lines = append(h.Lines, line)
			shown++
			p.left -= len(l.Content) + 1
		}
		d.Hunks = append(d.Hunks, h)
	}
	if shown < total {
		d.Cut = fmt.Sprintf("%d more lines of this diff not shown: a diff shows at most %d lines, a page at most %d KiB of diffs", total-shown, maxDiffLines, maxPageDiff>>10)
	}
	return d
}

// linesDiffer counts the lines in one text and not the other, as a summary says it; texts too
// large to count are not.
func linesDiffer(a, b string) string {
	if len(a)+len(b) > maxCountedText {
		return ""
	}
	count := map[string]int{}
	for l := range strings.Lines(a) {
		count[l]++
	}
	for l := range strings.Lines(b) {
		count[l]--
	}
	n := 0
	for _, c := range count {
		n += max(c, -c)
	}
	return fmt.Sprintf("; %d line(s) differ", n)
}

// sizeText says a text's size the way the notes say sizes.
func sizeText(n int) string {
	if n < 1<<10 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d KiB", (n+1<<9)>>10)
}

// String is the diff as diff -u prints it, under the two names.
func (d textDiff) String(from, to string) string {
	if d.Skipped != "" {
		return d.Skipped + "\n"
	}
	if len(d.Hunks) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
	for _, h := range d.Hunks {
		b.WriteString(h.Header() + "\n")
		for _, l := range h.Lines {
			b.WriteString(l.Sign() + l.Text + "\n")
			if l.NoNewline {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
	}
	if d.Cut != "" {
		b.WriteString(d.Cut + "\n")
	}
	return b.String()
}
