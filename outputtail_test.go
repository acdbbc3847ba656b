package hq

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOutputTailKeepsTheLastLines(t *testing.T) {
	var b bytes.Buffer
	for i := 1; i <= 30; i++ {
		b.WriteString("line " + string(rune('a'+i%26)) + "\n")
	}
	b.WriteString("line 3: unknown directive\n\n  \n")
	got := OutputTail(b.Bytes())
	lines := strings.Split(got, "\n")
	if len(lines) != MaxOutputLines {
		t.Fatalf("%d lines, want %d: %q", len(lines), MaxOutputLines, got)
	}
	if lines[len(lines)-1] != "line 3: unknown directive" {
		t.Fatalf("last line %q", lines[len(lines)-1])
	}
	if !strings.HasPrefix(got, "…") {
		t.Fatalf("a tail that left lines out does not say so: %q", got)
	}
}

func TestOutputTailShortOutputIsWhole(t *testing.T) {
	for in, want := range map[string]string{
		"line 3: unknown directive\n": "line 3: unknown directive",
		"no newline at the end":       "no newline at the end",
		"a\r\nb\rc\n":                 "a\nb\nc",
		"  \n\t\n":                    "",
		"":                            "",
	} {
		if got := OutputTail([]byte(in)); got != want {
			t.Errorf("OutputTail(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutputTailHostileInput(t *testing.T) {
	huge := bytes.Repeat([]byte("x"), 10<<20) // one line of 10 MiB, no newline
	cases := map[string][]byte{
		"huge line":      huge,
		"huge lines":     bytes.Repeat([]byte(strings.Repeat("é", 700)+"\n"), 5000),
		"binary":         {0, 1, 2, 0xff, 0xfe, 0x1b, '[', '3', '1', 'm', 'x', 0x80, 0xc3},
		"many newlines":  bytes.Repeat([]byte("\n"), 1<<20),
		"cut mid-rune":   append(bytes.Repeat([]byte("x"), 8000), []byte("€uro")...),
		"split sequence": append(bytes.Repeat([]byte("€"), 3000), 'z'),
	}
	for name, in := range cases {
		got := OutputTail(in)
		if len(got) > MaxOutput+len("…") {
			t.Errorf("%s: %d bytes, want at most %d", name, len(got), MaxOutput+len("…"))
		}
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\x00\x1b\r") {
			t.Errorf("%s: not clean text: %q", name, got)
		}
		if strings.Count(got, "\n") >= MaxOutputLines {
			t.Errorf("%s: %d lines", name, strings.Count(got, "\n")+1)
		}
		if CleanText(got) != got {
			t.Errorf("%s: the controller's cleaning would change it", name)
		}
	}
	if got := OutputTail(huge); !strings.HasPrefix(got, "…x") || !strings.HasSuffix(got, "x") {
		t.Errorf("huge line: %.20q…", got)
	}
	if got := OutputTail(cases["binary"]); got != "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD[31mx\uFFFD\uFFFD" {
		t.Errorf("binary: %q", got)
	}
	if got := OutputTail(cases["split sequence"]); !strings.HasSuffix(got, "€€z") || strings.Contains(got, "\uFFFD") {
		t.Errorf("split sequence: %q", got)
	}
}

func BenchmarkOutputTail(b *testing.B) {
	in := bytes.Repeat([]byte("some output of a chatty command\n"), 2048)
	for b.Loop() {
		OutputTail(in)
	}
}
