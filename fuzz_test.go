package hq

import "testing"

// FuzzValidName: a valid name never holds a path separator or starts with punctuation.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"web-1", "../x", "a/b", ".hidden", "", "x.y_z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidName(s) {
			return
		}
		for _, c := range s {
			if c == '/' || c == 0 || c == ' ' {
				t.Fatalf("%q accepted", s)
			}
		}
		if s[0] == '.' || s[0] == '-' || len(s) > MaxNameLen {
			t.Fatalf("%q accepted", s)
		}
	})
}
