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

// A template is values put into text: anything that would make it a program is refused at
// upload, naming the resource and the field.
func TestTemplatesAreValuesOnly(t *testing.T) {
	programs := []string{
		"{{range 100000}}{{range 100000}}x{{end}}{{end}}",
		`{{define "a"}}{{template "a"}}{{end}}{{template "a"}}`,
		`{{block "b" .}}x{{end}}`,
		"{{if .Node}}x{{end}}",
		"{{with .Labels}}{{.region}}{{end}}",
		"{{printf \"%0999999d\" 1}}",
		"{{.Node | printf \"%s\"}}",
		"{{$x := .Node}}{{$x}}",
		"{{.Labels}}",
		"{{.Labels.a.b}}",
		"{{.Node.x}}",
		"{{$.Node}}",
		"{{index .Labels \"region\"}}",
		"{{call .Node}}",
		"{{.Other}}",
		"{{1}}",
	}
	for _, p := range programs {
		err := ValidateModule([]Resource{{Name: "bomb", Kind: KindFile, Path: "/a", Content: p}})
		e, ok := err.(*Error)
		if !ok || e.Code != CodeInvalid || len(e.Details) != 1 || e.Details[0].Field != "resources[0].content" {
			t.Errorf("%s: accepted or refused oddly: %v", p, err)
		}
	}
	values := []string{"plain", "{{.Node}}", "a {{.Labels.region}} b {{.Vars.tier}} c", "{{- .Node -}}", "{{/* note */}}{{.Node}}"}
	for _, v := range values {
		if err := ValidateModule([]Resource{{Name: "ok", Kind: KindFile, Path: "/a", Content: v}}); err != nil {
			t.Errorf("%s: refused: %v", v, err)
		}
	}
}

// A value may hold "..": the rendered path is held to the rule a literal path is.
func TestRenderedPathsKeepThePathRule(t *testing.T) {
	r := Resource{Name: "conf", Kind: KindFile, Path: "/srv/{{.Vars.dir}}/app.conf", Content: "x"}
	for dir, ok := range map[string]bool{"eu": true, "../../../../tmp/escape": false, "a/../b": false, "": false} {
		_, err := r.Render(Values{Node: "n1", Vars: map[string]string{"dir": dir}})
		if (err == nil) != ok {
			t.Errorf("dir %q: %v", dir, err)
		}
		if err != nil && !strings.Contains(err.Error(), "conf path") {
			t.Errorf("dir %q: the error does not name the field: %v", dir, err)
		}
	}
	link := Resource{Name: "l", Kind: KindSymlink, Path: "/a/link", Target: "{{.Vars.to}}"}
	if _, err := link.Render(Values{Vars: map[string]string{"to": "../../etc/shadow"}}); err == nil {
		t.Error("a rendered link target that climbs out of the root was accepted")
	}
}

// What one field renders to is bounded, whatever the values.
func TestRenderIsBounded(t *testing.T) {
	big := strings.Repeat("v", 1024)
	r := Resource{Name: "f", Kind: KindFile, Path: "/a", Content: strings.Repeat("{{.Vars.v}}", MaxRendered/1024+1)}
	if _, err := r.Render(Values{Vars: map[string]string{"v": big}}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("rendered past the bound: %v", err)
	}
}
