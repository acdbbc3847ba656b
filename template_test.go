package hq

import (
	"strings"
	"testing"

	"github.com/meshhq/hq/tmpl"
)

func TestRenderFillsValuesAndRefusesMissingKeys(t *testing.T) {
	r := Resource{Name: "motd", Kind: KindFile, Path: "/etc/{{.Node}}/motd", Content: "region {{.Labels.region}} tier {{.Vars.tier}}\n",
		Command: []string{"echo", "{{.Node}}"}, Env: map[string]string{"R": "{{.Labels.region}}"}}
	if !r.Templated() || (Resource{Name: "x", Content: "plain"}).Templated() {
		t.Fatal("Templated is wrong")
	}
	got, err := r.Render(tmpl.Values{Node: "web-1", Labels: map[string]string{"region": "eu"}, Vars: map[string]string{"tier": "gold"}})
	if err != nil || got.Path != "/etc/web-1/motd" || got.Content != "region eu tier gold\n" || got.Command[1] != "web-1" || got.Env["R"] != "eu" {
		t.Fatalf("rendered %+v, %v", got, err)
	}
	if r.Content != "region {{.Labels.region}} tier {{.Vars.tier}}\n" || r.Env["R"] != "{{.Labels.region}}" {
		t.Fatal("rendering changed the resource it rendered")
	}
	_, err = r.Render(tmpl.Values{Node: "web-2", Vars: map[string]string{"tier": "gold"}})
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

// A template that is a program is refused at upload, naming the resource and the field.
func TestTemplatesAreValuesOnly(t *testing.T) {
	for _, p := range []string{"{{range 100000}}x{{end}}", "{{.Labels}}"} {
		err := ValidateModule([]Resource{{Name: "bomb", Kind: KindFile, Path: "/a", Content: p}})
		e, ok := err.(*Error)
		if !ok || e.Code != CodeInvalid || len(e.Details) != 1 || e.Details[0].Field != "resources[0].content" {
			t.Errorf("%s: accepted or refused oddly: %v", p, err)
		}
	}
	if err := ValidateModule([]Resource{{Name: "ok", Kind: KindFile, Path: "/a", Content: "a {{.Labels.region}} b"}}); err != nil {
		t.Errorf("values refused: %v", err)
	}
}

// A value may hold "..": the rendered path is held to the rule a literal path is.
func TestRenderedPathsKeepThePathRule(t *testing.T) {
	r := Resource{Name: "conf", Kind: KindFile, Path: "/srv/{{.Vars.dir}}/app.conf", Content: "x"}
	for dir, ok := range map[string]bool{"eu": true, "../../../../tmp/escape": false, "a/../b": false, "": false} {
		_, err := r.Render(tmpl.Values{Node: "n1", Vars: map[string]string{"dir": dir}})
		if (err == nil) != ok {
			t.Errorf("dir %q: %v", dir, err)
		}
		if err != nil && !strings.Contains(err.Error(), "conf path") {
			t.Errorf("dir %q: the error does not name the field: %v", dir, err)
		}
	}
	link := Resource{Name: "l", Kind: KindSymlink, Path: "/a/link", Target: "{{.Vars.to}}"}
	if _, err := link.Render(tmpl.Values{Vars: map[string]string{"to": "../../etc/shadow"}}); err == nil {
		t.Error("a rendered link target that climbs out of the root was accepted")
	}
}

// Volumes, ports and user render per node, and what they render to is held to the rules a
// literal one is held to: a value may hold ".." or a ':'.
func TestRenderedContainerFieldsKeepTheirRules(t *testing.T) {
	const img = "app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	r := Resource{Name: "app", Kind: KindContainer, Image: img,
		Volumes: []string{"/srv/{{.Vars.dir}}:/data", "/etc/app:/etc/{{.Node}}:ro"},
		Ports:   []string{"{{.Vars.ip}}:{{.Vars.port}}:80"}, User: "{{.Vars.uid}}"}
	if err := ValidateModule([]Resource{r}); err != nil {
		t.Fatalf("templated container refused: %v", err)
	}
	if !r.Templated() {
		t.Fatal("a templated volume is not seen")
	}
	vars := func(kv ...string) tmpl.Values {
		v := tmpl.Values{Node: "web-1", Vars: map[string]string{"dir": "app", "ip": "127.0.0.1", "port": "8080", "uid": "1000"}}
		for i := 0; i < len(kv); i += 2 {
			v.Vars[kv[i]] = kv[i+1]
		}
		return v
	}
	got, err := r.Render(vars())
	if err != nil || got.Volumes[0] != "/srv/app:/data" || got.Volumes[1] != "/etc/app:/etc/web-1:ro" || got.Ports[0] != "127.0.0.1:8080:80" || got.User != "1000" {
		t.Fatalf("rendered %+v, %v", got, err)
	}
	if r.Volumes[0] != "/srv/{{.Vars.dir}}:/data" || r.Ports[0] != "{{.Vars.ip}}:{{.Vars.port}}:80" {
		t.Fatal("rendering changed the resource it rendered")
	}
	for _, tc := range []struct {
		kv    []string
		field string
	}{
		{[]string{"dir", "../../../etc"}, "app volumes[0]"},
		{[]string{"dir", "a/../b"}, "app volumes[0]"},
		{[]string{"dir", "x:/etc:ro"}, "app volumes[0]"},
		{[]string{"dir", ""}, "app volumes[0]"},
		{[]string{"dir", "a/b"}, ""},
		{[]string{"port", "0"}, "app ports[0]"},
		{[]string{"port", "8080:81"}, "app ports[0]"},
		{[]string{"ip", "::1"}, "app ports[0]"},
		{[]string{"ip", "localhost"}, "app ports[0]"},
		{[]string{"uid", "0 --privileged"}, "app user"},
		{[]string{"uid", ""}, "app user"},
	} {
		_, err := r.Render(vars(tc.kv...))
		if tc.field == "" {
			if err != nil {
				t.Errorf("%v refused: %v", tc.kv, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.field+": renders to") {
			t.Errorf("%v: %v, want an error naming %s", tc.kv, err, tc.field)
		}
	}
	// Two volumes that render to the same container path.
	two := Resource{Name: "two", Kind: KindContainer, Image: img, Volumes: []string{"/a:/data", "/b:/{{.Vars.at}}"}}
	if _, err := two.Render(tmpl.Values{Vars: map[string]string{"at": "data"}}); err == nil || !strings.Contains(err.Error(), "two volumes[1]") {
		t.Errorf("two volumes at one container path: %v", err)
	}
	// The image is never a template: the digest is what is reviewed.
	tpl := Resource{Name: "img", Kind: KindContainer, Image: "app@{{.Vars.digest}}"}
	err = ValidateModule([]Resource{tpl})
	if e, ok := err.(*Error); !ok || len(e.Details) != 1 || e.Details[0].Field != "resources[0].image" || !strings.Contains(e.Details[0].Message, "pinned by digest") {
		t.Errorf("a templated image: %v", err)
	}
}
