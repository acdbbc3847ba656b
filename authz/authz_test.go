package authz

import (
	"strings"
	"testing"

	"github.com/meshhq/hq"
)

func TestRolesMeetTheirNeeds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		role hq.Role
		need Need
		ok   bool
	}{
		{hq.RoleViewer, Read, true}, {hq.RoleViewer, Deploy, false}, {hq.RoleViewer, Admin, false},
		{hq.RoleDeployer, Deploy, true}, {hq.RoleDeployer, Admin, false},
		{hq.RoleAdmin, Admin, true}, {hq.RoleAdmin, Deploy, true}, {"nobody", Read, false},
	} {
		if got := Grants(c.role, c.need); got != c.ok {
			t.Errorf("Grants(%s, %s) = %v, want %v", c.role, c.need, got, c.ok)
		}
	}
	err := Rule{Need: Deploy, Action: "module.push"}.Role(hq.Identity{Operator: "vera", Role: hq.RoleViewer})
	if hq.ErrorCode(err) != hq.CodeForbidden || !strings.Contains(err.Error(), "vera is a viewer: module.push needs deployer") {
		t.Errorf("a viewer pushing: %v", err)
	}
}

func TestScopes(t *testing.T) {
	t.Parallel()
	dan := hq.Identity{Operator: "dan", Role: hq.RoleDeployer, Modules: "web-*", Nodes: "team=web"}
	for _, c := range []struct {
		module, selector string
		refused          string // "" for allowed
	}{
		{"web-app", "team=web", ""},
		{"web-app", "team=web,region=eu", ""},
		{"web-app", "region=eu,team=web", ""},
		{"db", "team=web", "dan may change modules web-* only, not db"},
		{"web-app", "team=db", "dan may change nodes team=web only"},
		{"web-app", "", "dan may change nodes team=web only"},
		{"web-app", "team in (web,db)", "dan may change nodes team=web only"},
	} {
		err := CheckPlacement(dan, c.module, c.selector)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s on %q: %v", c.module, c.selector, err)
		case c.refused != "" && (hq.ErrorCode(err) != hq.CodeForbidden || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s on %q: %v, want forbidden: %s", c.module, c.selector, err, c.refused)
		}
	}
	if err := CheckLabels(dan, "web-1", map[string]string{"team": "db"}); hq.ErrorCode(err) != hq.CodeForbidden {
		t.Errorf("labels that take a node out of scope: %v", err)
	}
	if err := CheckLabels(dan, "web-1", map[string]string{"team": "web", "x": "y"}); err != nil {
		t.Errorf("labels that keep a node in scope: %v", err)
	}
	if got := (Rule{Object: "assignment/{node}/{module}"}).ObjectOf(func(k string) string { return map[string]string{"node": "n1", "module": "m"}[k] }); got != "assignment/n1/m" {
		t.Errorf("object: %s", got)
	}
}
