package hq

import (
	"strings"
	"testing"
	"text/template/parse"
)

// FuzzValidName: a valid name never holds a path separator or starts with punctuation.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"web-1", "../x", "a/b", ".hidden", "", "x.y_z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidName(s) {
			return
		}
		for _, c := range s {
			if c == '/' || c == 0 || c == ' ' {
				t.Fatalf("%q accepted", s)
			}
		}
		if s[0] == '.' || s[0] == '-' || len(s) > MaxNameLen {
			t.Fatalf("%q accepted", s)
		}
	})
}

// FuzzTemplateValuesOnly holds the template rule on any text: what is accepted is text, comments
// and the three values, and given every value it renders at once to at most the text plus one
// value for each of its actions.
func FuzzTemplateValuesOnly(f *testing.F) {
	for _, s := range []string{"{{.Node}}", "a{{.Labels.r}}b{{.Vars.t}}", "{{range 9}}x{{end}}", `{{define "a"}}{{template "a"}}{{end}}`,
		"{{- .Node -}}", "{{/* c */}}", "{{.Node | len}}", "{{", "}}{{.Vars.x}}{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tpl, err := parseTemplate(s)
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
		r := Resource{Name: "f", Kind: KindFile, Path: "/a", Content: s}
		out, err := r.Render(Values{Node: value, Labels: every, Vars: every})
		if err != nil {
			t.Fatalf("%q: a template of values with every value did not render: %v", s, err)
		}
		if len(out.Content) > len(s)+len(value)*len(tpl.Tree.Root.Nodes) {
			t.Fatalf("%q rendered to %d bytes", s, len(out.Content))
		}
	})
}
