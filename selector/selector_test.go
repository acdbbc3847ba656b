package selector

import (
	"reflect"
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

func TestParseMatches(t *testing.T) {
	web := map[string]string{"role": "web", "region": "eu"}
	db := map[string]string{"role": "db"}
	for _, c := range []struct {
		sel     string
		web, db bool
	}{
		{"", true, true},
		{"role=web", true, false},
		{"role==web", true, false},
		{"role!=web", false, true},
		{"role in (web, db)", true, true},
		{"role notin (web)", false, true},
		{"region", true, false},
		{"!region", false, true},
		{"role=web, region=eu", true, false},
		{"role in(web),!gpu", true, false},
		{"example.com/tier!=x", true, true},
	} {
		s, err := Parse(c.sel)
		if err != nil {
			t.Fatalf("%q: %v", c.sel, err)
		}
		if s.Matches(web) != c.web || s.Matches(db) != c.db {
			t.Errorf("%q: web %v db %v, want %v %v", c.sel, s.Matches(web), s.Matches(db), c.web, c.db)
		}
	}
}

func TestParseNamesTheBadTerm(t *testing.T) {
	for sel, term := range map[string]string{
		"role=web,,x":                     `""`,
		"role=web, bad key":               `"bad key"`,
		"role in web":                     `"role in web"`,
		"role=we b":                       `"role=we b"`,
		"-x=1":                            `"-x=1"`,
		"role in (a,(b))":                 `"role in (a,(b))"`,
		"role=" + strings.Repeat("v", 64): `"role=`,
	} {
		_, err := Parse(sel)
		if hq.ErrorCode(err) != hq.CodeInvalid || !strings.Contains(err.Error(), "term "+term) {
			t.Errorf("%q: %v, want invalid naming term %s", sel, err, term)
		}
	}
}

// FuzzParse: parsing never panics, and a selector that parses prints in a form that
// parses back to the same selector.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "role=web", "a!=b,c", "!x", "k in (a,b)", "k notin (a, b),z==y", "a=(", "in in (in)", "x,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := Parse(s)
		if err != nil {
			if hq.ErrorCode(err) != hq.CodeInvalid {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		again, err := Parse(sel.String())
		if err != nil {
			t.Fatalf("%q printed as %q: %v", s, sel.String(), err)
		}
		if !reflect.DeepEqual(sel, again) {
			t.Fatalf("%q: %+v, printed %q, parsed back %+v", s, sel, sel.String(), again)
		}
		sel.Matches(map[string]string{"role": "web"})
	})
}
