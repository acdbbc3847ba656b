package webui

import (
	"fmt"
	"strings"
)

// A line-based unified diff, as diff -u prints it, for the contents of text files. Lines are
// aligned with Myers' algorithm after the common head and tail are set aside; the work is
// bounded twice: texts above maxDiffText are not compared line by line at all, and past
// maxDiffEdits edits the lines in between are shown as one replacement, which is a true diff,
// if not the shortest.

const (
	// maxDiffText bounds each side of a content diff.
	maxDiffText = 64 << 10
	// maxDiffEdits bounds the alignment: its time grows with the texts' length times the edits,
	// and its memory with the edits squared (about 4 MB at this bound).
	maxDiffEdits = 1000
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
	// Coarse says the alignment gave up and the changed middle is shown as one replacement.
	Coarse bool
}

// Same reports whether the diff found the texts equal.
func (d textDiff) Same() bool { return d.Skipped == "" && len(d.Hunks) == 0 }

// unifiedDiff compares two texts line by line.
func unifiedDiff(a, b string) textDiff {
	if len(a) > maxDiffText || len(b) > maxDiffText {
		return textDiff{Skipped: fmt.Sprintf("not compared line by line: %d bytes before, %d after; texts up to %d KiB are", len(a), len(b), maxDiffText>>10)}
	}
	if a == b {
		return textDiff{}
	}
	la, lb := splitLines(a), splitLines(b)
	head := 0
	for head < len(la) && head < len(lb) && la[head] == lb[head] {
		head++
	}
	tail := 0
	for tail < len(la)-head && tail < len(lb)-head && la[len(la)-1-tail] == lb[len(lb)-1-tail] {
		tail++
	}
	mid, ok := myers(la[head:len(la)-tail], lb[head:len(lb)-tail], maxDiffEdits)
	d := textDiff{Coarse: !ok}
	if !ok {
		mid = replacement(len(la)-head-tail, len(lb)-head-tail)
	}
	ops := make([]diffOp, 0, head+len(mid)+tail)
	for range head {
		ops = append(ops, opEqual)
	}
	ops = append(ops, mid...)
	for range tail {
		ops = append(ops, opEqual)
	}
	d.Hunks = hunks(ops, la, lb, diffContext)
	return d
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
	return b.String()
}

// splitLines cuts a text into lines, each with its newline, so that a last line without one
// differs from the same line with one.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// replacement is every line of a deleted, then every line of b inserted.
func replacement(n, m int) []diffOp {
	ops := make([]diffOp, 0, n+m)
	for range n {
		ops = append(ops, opDelete)
	}
	for range m {
		ops = append(ops, opInsert)
	}
	return ops
}

// myers returns the shortest edit script from a to b, or false when it takes more than maxD
// edits. It keeps, for every number of edits d, the furthest point reached on each diagonal
// k = x - y, and walks those back from the end.
func myers(a, b []string, maxD int) ([]diffOp, bool) {
	n, m := len(a), len(b)
	maxD = min(maxD, n+m)
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	// trace[d] holds v[-d..d] after step d.
	var trace [][]int32
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1])
			} else {
				x = int(v[off+k-1]) + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
				return backtrack(trace, n, m), true
			}
		}
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
	}
	return nil, false
}

// backtrack walks the trace from (n, m) back to the start and returns the edits in order.
func backtrack(trace [][]int32, n, m int) []diffOp {
	var ops []diffOp
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		prev := trace[d-1] // v[-(d-1)..d-1]
		at := func(k int) int { return int(prev[k+d-1]) }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1 // came down: a line of b inserted
		} else {
			pk = k - 1 // came right: a line of a deleted
		}
		px := at(pk)
		py := px - pk
		// The snake back to just after the edit: one step right of (px, py) for a deletion,
		// one down for an insertion.
		for x > px && y > py {
			ops = append(ops, opEqual)
			x--
			y--
		}
		if pk == k+1 {
			ops = append(ops, opInsert)
		} else {
			ops = append(ops, opDelete)
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		ops = append(ops, opEqual)
		x--
		y--
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

// hunks groups an edit script into hunks with context lines of unchanged text around each
// change; changes closer than twice the context share a hunk.
func hunks(ops []diffOp, a, b []string, context int) []hunk {
	// Where each op starts in a and in b.
	ai := make([]int, len(ops)+1)
	bi := make([]int, len(ops)+1)
	for i, op := range ops {
		ai[i+1], bi[i+1] = ai[i], bi[i]
		if op != opInsert {
			ai[i+1]++
		}
		if op != opDelete {
			bi[i+1]++
		}
	}
	var out []hunk
	for i := 0; i < len(ops); {
		if ops[i] == opEqual {
			i++
			continue
		}
		start := max(0, i-context)
		// Extend over changes until a run of unchanged lines longer than twice the context.
		end := i
		for j := i; j < len(ops); {
			if ops[j] != opEqual {
				end = j + 1
				j++
				continue
			}
			run := j
			for run < len(ops) && ops[run] == opEqual {
				run++
			}
			if run == len(ops) || run-j > 2*context {
				break
			}
			j = run
		}
		stop := min(len(ops), end+context)
		h := hunk{OldStart: ai[start] + 1, NewStart: bi[start] + 1}
		for j := start; j < stop; j++ {
			var text string
			switch ops[j] {
			case opDelete:
				text = a[ai[j]]
				h.OldLines++
			case opInsert:
				text = b[bi[j]]
				h.NewLines++
			default:
				text = a[ai[j]]
				h.OldLines++
				h.NewLines++
			}
			line := diffLine{Op: ops[j], Text: strings.TrimSuffix(text, "\n"), NoNewline: !strings.HasSuffix(text, "\n")}
			h.Lines = append(h.Lines, line)
		}
		out = append(out, h)
		i = stop
	}
	return out
}
