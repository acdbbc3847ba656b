package hq

import (
	"slices"
	"strings"
	"testing"
	"text/template/parse"
)

// FuzzPathOverlaps checks the one-walk overlap rule against the plain reading of it, pair by
// pair, on small sets of paths drawn from a few that nest, share prefixes and repeat: every
// overlap it reports is one, at most one per claim; every new claim of a repeated path is in a
// reported repeat, and every claim of a path declared once that lies under a path that may not
// hold it is reported.
func FuzzPathOverlaps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5})
	f.Add([]byte{0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87})
	f.Add([]byte{0x04, 0x14, 0x24, 0x11, 0x01})
	f.Add([]byte{0xff, 0x7f, 0x3f, 0x1f, 0x0f})
	paths := []string{"/a", "/a/b", "/a/b/c", "/a-b", "/a/c", "/ab", "/a/b-c", "/b", "/a/b/c/d", "/a.b/c", "/b/a", "/a/bc"}
	kinds := []string{KindFile, KindDirectory, KindSymlink, KindAbsent}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 24 {
			data = data[:24]
		}
		claims := make([]PathClaim, len(data))
		for i, c := range data {
			claims[i] = PathClaim{Path: paths[int(c&0x0f)%len(paths)], Kind: kinds[int(c>>4)%4], New: c&0x80 != 0, ID: i}
		}
		orig := slices.Clone(claims)
		got := PathOverlaps(claims)
		inner, same := map[int]bool{}, map[int]bool{}
		for _, o := range got {
			if o.Same() {
				same[o.Outer.ID], same[o.Inner.ID] = true, true
			}
			if inner[o.Inner.ID] {
				t.Fatalf("claim %d reported twice: %+v", o.Inner.ID, got)
			}
			inner[o.Inner.ID] = true
			if !o.Outer.New && !o.Inner.New {
				t.Fatalf("reported two old claims: %+v", o)
			}
			if !o.Same() && !(under(o.Inner.Path, o.Outer.Path) && o.Outer.Kind != KindDirectory) {
				t.Fatalf("reported what is no overlap: %+v", o)
			}
		}
		count := map[string]int{}
		for _, c := range orig {
			count[c.Path]++
		}
		for _, c := range orig {
			for _, d := range orig {
				if c.ID == d.ID || !c.New && !d.New {
					continue
				}
				if c.Path == d.Path && c.New && !same[c.ID] {
					t.Fatalf("%+v declares the path of %+v; not reported in %+v", c, d, got)
				}
				if count[c.Path] == 1 && under(c.Path, d.Path) && d.Kind != KindDirectory && !inner[c.ID] {
					t.Fatalf("%+v lies under %+v; not reported in %+v", c, d, got)
				}
			}
		}
	})
}

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
