package bearer

import (
	"net/http/httptest"
	"testing"
)

func TestToken(t *testing.T) {
	for header, want := range map[string]string{
		"":                 "",
		"Bearer abc":       "abc",
		"bearer abc":       "abc",
		"BEARER  abc ":     "abc",
		"Basic dTpwYXNz":   "",
		"Bearer":           "",
		"Bearerabc":        "",
		"Token abc":        "",
		"Bearer abc def":   "abc def",
		"Bearer\tabc":      "",
		"Bearer " + "\t\t": "",
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		if got := Token(r); got != want {
			t.Errorf("%q: %q, want %q", header, got, want)
		}
	}
}
