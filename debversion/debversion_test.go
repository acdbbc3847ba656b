package debversion

import "testing"

func TestValid(t *testing.T) {
	for v, want := range map[string]bool{
		"1.22.1-9":            true,
		"1:12.2.0-14+deb12u1": true,
		"4:12.2.0-3":          true,
		"2.0~rc1":             true,
		"1:1.2.13.dfsg-1":     true,
		"2024a-0+deb12u1":     true,
		"1.0-1-2":             true,
		"0":                   true,
		"":                    false,
		"v1.0":                false,
		"1.0-":                false,
		":1.0":                false,
		"a:1.0":               false,
		"1.0 beta":            false,
		"1.0-1_2":             false,
		"1.0;rm":              false,
		"1.0-1~a+b.c-":        false,
	} {
		if got := Valid(v); got != want {
			t.Errorf("Valid(%q) = %v, want %v", v, got, want)
		}
	}
}
