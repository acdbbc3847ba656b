package hq

import (
	"strings"
	"unicode/utf8"
)

// MaxOutputLines and MaxOutput bound the end of a command's output that a failure's error
// carries: enough to say why (a validate's complaint, a job's last words), small enough that
// the error around it still fits in MaxText.
const (
	MaxOutputLines = 10
	MaxOutput      = 1536
)

// OutputTail is the end of what a command printed (its standard output and error together),
// as a failure's error carries it: the last MaxOutputLines lines that are not blank, at most
// MaxOutput bytes, cleaned as CleanText cleans a node's text (valid UTF-8, no NUL) and with no
// control character but tab and newline, so a terminal shows it as the page does. A tail that
// left something out starts with "…". It is "" when the command printed nothing but space.
func OutputTail(b []byte) string {
	// The lines kept fit in MaxOutput bytes, each of at most 4 per rune after cleaning: what
	// lies further back is never kept, so it is not read.
	cut := false
	if max := 4 * MaxOutput; len(b) > max {
		b, cut = b[len(b)-max:], true
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	lines := strings.Split(cleanOutput(b), "\n")
	kept := make([]string, 0, MaxOutputLines)
	size := 0
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimRight(lines[i], " \t")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if len(kept) == MaxOutputLines || size >= MaxOutput {
			cut = true
			break
		}
		if room := MaxOutput - size; len(l) > room {
			l, cut = tailOf(l, room), true
		}
		kept = append(kept, l)
		size += len(l) + 1
	}
	if len(kept) == 0 {
		return ""
	}
	for i, j := 0, len(kept)-1; i < j; i, j = i+1, j-1 {
		kept[i], kept[j] = kept[j], kept[i]
	}
	s := strings.Join(kept, "\n")
	if cut {
		s = "…" + s
	}
	return s
}

// cleanOutput is b as valid UTF-8 text: a bad byte, NUL or other control character becomes
// U+FFFD, except tab and newline; a carriage return ends a line (a progress bar's redraws).
func cleanOutput(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == '\r' && n == 1:
			if len(b) > 1 && b[1] == '\n' {
				n = 2
			}
			sb.WriteByte('\n')
		case r == '\n' || r == '\t':
			sb.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			sb.WriteRune(utf8.RuneError)
		default: // including RuneError itself, for a bad byte
			sb.WriteRune(r)
		}
		b = b[n:]
	}
	return sb.String()
}

// tailOf is the last bytes of s that fit in room, starting on a rune boundary.
func tailOf(s string, room int) string {
	if room <= 0 {
		return ""
	}
	i := len(s) - room
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
