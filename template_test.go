package hq

import (
	"encoding/json"
	"math/rand/v2"
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

// EncodedLen is what json.Marshal writes for a string, escapes and all.
func TestEncodedLenIsJSONs(t *testing.T) {
	cases := []string{"", "plain", "<a href=\"x\">&amp;</a>", "tab\there\nnew\r\b\f\x00\x01\x1f", "back\\slash",
		"é ü 日本 😀", "\u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", strings.Repeat("<", 100)}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		enc, _ := json.Marshal(s)
		if got := EncodedLen(s); got != len(enc)-2 {
			t.Fatalf("EncodedLen(%q) = %d, json.Marshal writes %d", s, got, len(enc)-2)
		}
	}
}

// A module's Size for a node is the length of its resources filled in and encoded, worked out
// without filling them in.
func TestSizeIsTheRenderedEncoding(t *testing.T) {
	rs := []Resource{
		{Name: "conf", Kind: KindFile, Path: "/etc/{{.Node}}.conf", Content: "a {{.Vars.a}} b {{- .Vars.a -}} \n c {{/* note */}}<{{.Labels.region}}>\n"},
		{Name: "plain", Kind: KindFile, Path: "/etc/plain", Content: "<&>"},
		{Name: "run", Kind: KindAction, Command: []string{"{{.Vars.a}}", "x{{.Vars.a}}"}},
		{Name: "svc", Kind: KindService, Command: []string{"/bin/svc"}, Env: map[string]string{"A": "{{.Vars.a}}", "B": "b"}},
		{Name: "only", Kind: KindFile, Path: "/etc/only", Content: "{{.Vars.empty}}"},
	}
	sz, err := SizeOf(rs)
	if err != nil || !sz.Templated() {
		t.Fatalf("SizeOf: %v", err)
	}
	for _, v := range []tmpl.Values{
		{Node: "web-1", Labels: map[string]string{"region": "eu"}, Vars: map[string]string{"a": "x", "empty": "y"}},
		{Node: "n", Labels: map[string]string{"region": "<&>"}, Vars: map[string]string{"a": "日本 \"q\" \t\u2028", "empty": "z"}},
		{Node: "web-2", Labels: map[string]string{"region": ""}, Vars: map[string]string{"a": strings.Repeat("v", 1024), "empty": "q"}},
	} {
		var out []Resource
		for _, r := range rs {
			rr, err := r.Render(v)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rr)
		}
		enc, _ := json.Marshal(out)
		if got := sz.For(v); got != len(enc) {
			t.Fatalf("Size for %v is %d, the encoding is %d bytes", v, got, len(enc))
		}
	}
	plain, err := SizeOf(rs[1:2])
	enc, _ := json.Marshal(rs[1:2])
	if err != nil || plain.Templated() || plain.For(tmpl.Values{}) != len(enc) {
		t.Fatalf("an untemplated module's size is %d, its encoding %d bytes (%v)", plain.For(tmpl.Values{}), len(enc), err)
	}
}

// A value that renders a command, a validate command or an env value to what a literal one may
// not be is refused, as the literal is.
func TestRenderedCommandAndEnvAreHeldToTheLiteralRules(t *testing.T) {
	v := tmpl.Values{Node: "n", Vars: map[string]string{"empty": "", "nul": "a\x00b", "ok": "/bin/true"}}
	for _, r := range []Resource{
		{Name: "run", Kind: KindAction, Command: []string{"{{.Vars.empty}}"}},
		{Name: "run", Kind: KindAction, Command: []string{"{{.Vars.nul}}"}},
		{Name: "run", Kind: KindAction, Command: []string{"/bin/echo", "{{.Vars.nul}}"}},
		{Name: "svc", Kind: KindService, Command: []string{"/bin/svc"}, Env: map[string]string{"A": "{{.Vars.nul}}"}},
		{Name: "conf", Kind: KindFile, Path: "/etc/c", Validate: []string{"{{.Vars.empty}}"}},
		{Name: "link", Kind: KindSymlink, Path: "/etc/l", Target: "{{.Vars.empty}}"},
	} {
		if err := ValidateModule([]Resource{r}); err != nil {
			t.Fatalf("%+v: the template itself was refused: %v", r, err)
		}
		if _, err := r.Render(v); err == nil || !strings.Contains(err.Error(), "renders to") {
			t.Errorf("%+v rendered with %v: %v", r, v.Vars, err)
		}
	}
	ok := Resource{Name: "run", Kind: KindAction, Command: []string{"{{.Vars.ok}}", "{{.Vars.empty}}"}, Env: map[string]string{"E": "{{.Vars.empty}}"}}
	if _, err := ok.Render(v); err != nil {
		t.Fatalf("a good command was refused: %v", err)
	}
	// The literal forms are refused at upload.
	for _, r := range []Resource{
		{Name: "svc", Kind: KindService, Command: []string{"/bin/svc"}, Env: map[string]string{"A": "a\x00b"}},
		{Name: "run", Kind: KindAction, Command: []string{""}},
	} {
		if err := ValidateModule([]Resource{r}); err == nil {
			t.Errorf("%+v was accepted", r)
		}
	}
}

// Rendering stops once a resource's templates pass what is left, all fields together.
func TestRenderWithinStopsAtTheBound(t *testing.T) {
	r := Resource{Name: "run", Kind: KindAction, Command: []string{"/bin/echo", "{{.Vars.a}}{{.Vars.a}}", "{{.Vars.a}}"}}
	v := tmpl.Values{Vars: map[string]string{"a": strings.Repeat("x", 100)}}
	left := 250
	if _, err := r.RenderWithin(v, &left); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("300 bytes rendered within 250: %v", err)
	}
	left = 300
	if _, err := r.RenderWithin(v, &left); err != nil || left != 0 {
		t.Fatalf("300 bytes within 300: %v, %d left", err, left)
	}
}

// health.http may be a template, filled in like the other fields and held to the URL rule once
// rendered; the resource it was rendered from keeps its template.
func TestHealthHTTPIsTemplated(t *testing.T) {
	v := tmpl.Values{Node: "web-1", Labels: map[string]string{"port": "8080"}, Vars: map[string]string{"bad": "ftp://x", "empty": ""}}
	svc := Resource{Name: "svc", Kind: KindService, Command: []string{"/bin/svc"},
		Health: &Health{HTTP: "http://{{.Node}}.internal:{{.Labels.port}}/health"}}
	ctr := Resource{Name: "web", Kind: KindContainer, Image: "registry.example/web@sha256:" + strings.Repeat("a", 64),
		Health: &Health{HTTP: "https://127.0.0.1:{{.Labels.port}}/ready"}}
	for _, r := range []Resource{svc, ctr} {
		if err := ValidateModule([]Resource{r}); err != nil {
			t.Fatalf("%s: a templated health URL was refused at upload: %v", r.Name, err)
		}
		if !r.Templated() {
			t.Fatalf("%s: a templated health URL is not Templated", r.Name)
		}
	}
	got, err := svc.Render(v)
	if err != nil || got.Health.HTTP != "http://web-1.internal:8080/health" {
		t.Fatalf("rendered %+v, %v", got.Health, err)
	}
	if svc.Health.HTTP != "http://{{.Node}}.internal:{{.Labels.port}}/health" {
		t.Fatal("rendering changed the resource it rendered")
	}
	if _, err := ctr.Render(tmpl.Values{Node: "web-1"}); err == nil || !strings.Contains(err.Error(), "health.http") || !strings.Contains(err.Error(), `"port"`) {
		t.Fatalf("a missing label rendered: %v", err)
	}
	for _, url := range []string{"{{.Vars.bad}}", "http://{{.Vars.empty}}/health"} {
		r := svc
		r.Health = &Health{HTTP: url}
		if _, err := r.Render(v); err == nil || !strings.Contains(err.Error(), "health.http: renders to") {
			t.Errorf("%s rendered with %v: %v", url, v.Vars, err)
		}
	}
	if err := ValidateModule([]Resource{{Name: "svc", Kind: KindService, Command: []string{"/bin/svc"}, Health: &Health{HTTP: "{{.Labels.port"}}}); err == nil {
		t.Fatal("a broken health.http template was accepted")
	}
	sz, err := SizeOf([]Resource{svc})
	rendered, _ := json.Marshal([]Resource{got})
	if err != nil || sz.For(v) != len(rendered) {
		t.Fatalf("size %d, rendered encoding %d bytes (%v)", sz.For(v), len(rendered), err)
	}
}
