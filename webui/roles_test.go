package webui

import (
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

func TestParseRoles(t *testing.T) {
	m, err := ParseRoles(" hq-admins=admin, hq-deployers = deployer ,*=viewer,")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		values []string
		want   hq.Role
	}{
		{[]string{"hq-admins"}, hq.RoleAdmin},
		{[]string{"staff", "hq-deployers"}, hq.RoleDeployer},
		{[]string{"hq-deployers", "hq-admins"}, hq.RoleAdmin}, // the strongest wins, in any order
		{[]string{"staff"}, hq.RoleViewer},
		{nil, hq.RoleViewer},
		{[]string{"HQ-ADMINS"}, hq.RoleViewer}, // values are matched exactly
	} {
		if got := m.Role(tc.values); got != tc.want {
			t.Errorf("Role(%q) = %q, want %q", tc.values, got, tc.want)
		}
	}
	strict, err := ParseRoles("hq-deployers=deployer")
	if err != nil {
		t.Fatal(err)
	}
	if got := strict.Role([]string{"staff"}); got != "" {
		t.Errorf("without * a value of no entry maps to %q, want refused", got)
	}
	for in, want := range map[string]string{
		"":                            "no VALUE=ROLE entries",
		" , ":                         "no VALUE=ROLE entries",
		"hq-admins":                   "is not VALUE=ROLE",
		"=admin":                      "is not VALUE=ROLE",
		"hq-admins=root":              "the role must be admin, deployer or viewer",
		"hq-admins=":                  "the role must be admin, deployer or viewer",
		"a=admin,a=viewer":            `"a" is mapped twice`,
		"*=viewer,*=admin":            `"*" is mapped twice`,
		"a=admin,b=viewer,a=deployer": `"a" is mapped twice`,
	} {
		if _, err := ParseRoles(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRoles(%q): %v, want %q", in, err, want)
		}
	}
}

// A mapping either parses into one whose every role is a real one, or is refused.
func FuzzParseRoles(f *testing.F) {
	for _, s := range []string{"hq-admins=admin,hq-deployers=deployer,*=viewer", "a=b", "*=viewer", ",,=", "a=admin,a=admin"} {
		f.Add(s, "hq-admins")
	}
	f.Fuzz(func(t *testing.T, s, value string) {
		m, err := ParseRoles(s)
		if err != nil {
			return
		}
		if r := m.Role([]string{value}); r != "" && !r.Valid() {
			t.Fatalf("ParseRoles(%q) maps %q to %q", s, value, r)
		}
		if len(m.roles) == 0 && m.fallback == "" {
			t.Fatalf("ParseRoles(%q) took a mapping of nothing", s)
		}
	})
}
