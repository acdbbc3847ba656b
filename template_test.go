package hq

import (
	"strings"
	"testing"
)

func TestRenderFillsValuesAndRefusesMissingKeys(t *testing.T) {
	r := Resource{Name: "motd", Kind: KindFile, Path: "/etc/{{.Node}}/motd", Content: "region {{.Labels.region}} tier {{.Vars.tier}}\n",
		Command: []string{"echo", "{{.Node}}"}, Env: map[string]string{"R": "{{.Labels.region}}"}}
	if !r.Templated() || (Resource{Name: "x", Content: "plain"}).Templated() {
		t.Fatal("Templated is wrong")
	}
	got, err := r.Render(Values{Node: "web-1", Labels: map[string]string{"region": "eu"}, Vars: map[string]string{"tier": "gold"}})
	if err != nil || got.Path != "/etc/web-1/motd" || got.Content != "region eu tier gold\n" || got.Command[1] != "web-1" || got.Env["R"] != "eu" {
		t.Fatalf("rendered %+v, %v", got, err)
	}
	if r.Content != "region {{.Labels.region}} tier {{.Vars.tier}}\n" || r.Env["R"] != "{{.Labels.region}}" {
		t.Fatal("rendering changed the resource it rendered")
	}
	_, err = r.Render(Values{Node: "web-2", Vars: map[string]string{"tier": "gold"}})
	if err == nil || !strings.Contains(err.Error(), `"region"`) {
		t.Fatalf("a missing label rendered: %v", err)
	}
}

func TestValidateModuleRefusesBadTemplates(t *testing.T) {
	err := ValidateModule([]Resource{{Name: "a", Kind: KindFile, Path: "/a", Content: "{{.Labels.region"}})
	e, ok := err.(*Error)
	if !ok || e.Code != CodeInvalid || e.Details[0].Field != "resources[0].content" {
		t.Fatalf("a broken template was accepted: %v", err)
	}
}
