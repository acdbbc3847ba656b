package tmpl

import (
	"runtime"
	"strings"
	"testing"
	"text/template/parse"
)

func TestRenderFillsValuesAndRefusesMissingKeys(t *testing.T) {
	s := "{{.Node}} in {{.Labels.region}}, tier {{.Vars.tier}}"
	got, err := Render(s, Values{Node: "web-1", Labels: map[string]string{"region": "eu"}, Vars: map[string]string{"tier": "gold"}})
	if err != nil || got != "web-1 in eu, tier gold" {
		t.Fatalf("rendered %q, %v", got, err)
	}
	if _, err := Render(s, Values{Node: "web-2", Vars: map[string]string{"tier": "gold"}}); err == nil || !strings.HasPrefix(err.Error(), `map has no entry for key "region"`) {
		t.Fatalf("a missing label rendered: %v", err)
	}
}

// A template is values put into text: anything that would make it a program is refused.
func TestValuesOnly(t *testing.T) {
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
		if err := Check(p); err == nil {
			t.Errorf("%s: accepted", p)
		}
	}
	values := []string{"plain", "{{.Node}}", "a {{.Labels.region}} b {{.Vars.tier}} c", "{{- .Node -}}", "{{/* note */}}{{.Node}}"}
	for _, v := range values {
		if err := Check(v); err != nil {
			t.Errorf("%s: refused: %v", v, err)
		}
	}
}

// What one template renders to is bounded, whatever the values.
func TestRenderIsBounded(t *testing.T) {
	big := strings.Repeat("v", 1024)
	s := strings.Repeat("{{.Vars.v}}", MaxRendered/1024+1)
	if _, err := Render(s, Values{Vars: map[string]string{"v": big}}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("rendered past the bound: %v", err)
	}
}

// FuzzValuesOnly holds the template rule on any text: what is accepted is text, comments
// and the three values, and given every value it renders at once to at most the text plus one
// value for each of its actions.
func FuzzValuesOnly(f *testing.F) {
	for _, s := range []string{"{{.Node}}", "a{{.Labels.r}}b{{.Vars.t}}", "{{range 9}}x{{end}}", `{{define "a"}}{{template "a"}}{{end}}`,
		"{{- .Node -}}", "{{/* c */}}", "{{.Node | len}}", "{{", "}}{{.Vars.x}}{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := parseValues(s)
		if err != nil {
			return
		}
		for _, n := range tpl.Tree.Root.Nodes {
			switch n := n.(type) {
			case *parse.TextNode, *parse.CommentNode:
			case *parse.ActionNode:
				if f, ok := n.Pipe.Cmds[0].Args[0].(*parse.FieldNode); !ok || !valueField(f.Ident) {
					t.Fatalf("%q: accepted %s", s, n)
				}
			default:
				t.Fatalf("%q: accepted %s", s, n)
			}
		}
		value := strings.Repeat("v", 16)
		every := map[string]string{}
		for _, n := range tpl.Tree.Root.Nodes {
			if a, ok := n.(*parse.ActionNode); ok {
				if id := a.Pipe.Cmds[0].Args[0].(*parse.FieldNode).Ident; len(id) == 2 {
					every[id[1]] = value
				}
			}
		}
		out, err := Render(s, Values{Node: value, Labels: every, Vars: every})
		if err != nil {
			t.Fatalf("%q: a template of values with every value did not render: %v", s, err)
		}
		if len(out) > len(s)+len(value)*len(tpl.Tree.Root.Nodes) {
			t.Fatalf("%q rendered to %d bytes", s, len(out))
		}
	})
}

// Rendering stops at the write that would pass the bound: a template that expands a hundredfold
// is refused having built no more than the bound.
func TestRenderWithinStopsAtTheBound(t *testing.T) {
	s := strings.Repeat("{{.Vars.a}}", 100)
	v := Values{Vars: map[string]string{"a": strings.Repeat("x", 64<<10)}}
	if err := Check(s); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := RenderWithin(s, v, 8<<10)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "more than 8192 bytes") {
		t.Fatalf("6.4 MB rendered within 8 KiB: %v", err)
	}
	// The whole would be 6.4 MB; what was allocated is the parse and the bound, not that.
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("rendering within 8 KiB allocated %d bytes", got)
	}
	if got, err := RenderWithin("{{.Vars.a}}", v, 64<<10); err != nil || len(got) != 64<<10 {
		t.Fatalf("exactly the bound: %d bytes, %v", len(got), err)
	}
}

// Parts are a template's text and the values it puts in, as Render fills them in.
func TestParts(t *testing.T) {
	texts, refs, err := Parts("a {{.Node}} b {{- .Labels.region -}} c {{/* x */}}{{.Vars.tier}}")
	want := []Ref{{Of: "Node"}, {Of: "Labels", Key: "region"}, {Of: "Vars", Key: "tier"}}
	if err != nil || strings.Join(texts, "|") != "a | b|c " || len(refs) != 3 || refs[0] != want[0] || refs[1] != want[1] || refs[2] != want[2] {
		t.Fatalf("Parts = %q, %v, %v", texts, refs, err)
	}
	if _, _, err := Parts("{{range .Labels}}{{end}}"); err == nil {
		t.Fatal("a program's parts were given")
	}
}
