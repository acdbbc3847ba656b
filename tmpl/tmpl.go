// Package tmpl is the template language of a resource's fields: text with values put in,
// {{.Node}}, {{.Labels.k}} and {{.Vars.k}}, and nothing else. It is text/template with every
// action but those three refused when a template is parsed, and rendering is bounded, so a
// template can run the controller out of neither time nor memory when it composes a node's
// declaration; a key the node lacks is an error, never an empty string.
package tmpl

import (
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
)

// Values are what a template may use: {{.Node}}, {{.Labels.k}} and {{.Vars.k}}. The controller
// fills them in when it composes a node's declaration, so what is digested, signed and applied
// is concrete.
type Values struct {
	Node   string
	Labels map[string]string
	Vars   map[string]string
}

// MaxRendered bounds what one template renders to. A template is text with values put in, so
// this is only reached by a field already near the body limit with long values in it.
const MaxRendered = 1 << 20

// Is reports whether s is a template rather than plain text.
func Is(s string) bool { return strings.Contains(s, "{{") }

// Check reports why s does not parse, or is not values only; nil when it is a template Render
// accepts.
func Check(s string) error {
	_, err := parseValues(s)
	return err
}

// Render returns s with every value filled in from v. A key v lacks is an error naming the
// key; so is a result longer than MaxRendered.
func Render(s string, v Values) (string, error) {
	return RenderWithin(s, v, MaxRendered)
}

// RenderWithin is Render with a result longer than max bytes an error: rendering stops at the
// write that would pass max, so what is built never grows far beyond it.
func RenderWithin(s string, v Values, max int) (string, error) {
	t, err := parseValues(s)
	b := boundedWriter{max: min(max, MaxRendered)}
	if err == nil {
		err = t.Execute(&b, map[string]any{"Node": v.Node, "Labels": nonNil(v.Labels), "Vars": nonNil(v.Vars)})
	}
	if err != nil {
		return "", cleanError(err)
	}
	return b.String(), nil
}

// Ref is one value a template puts in: Of is "Node", "Labels" or "Vars", Key the label's or
// var's key (empty for Node).
type Ref struct {
	Of, Key string
}

// Lookup returns the value r names in v, and whether v has it.
func (v Values) Lookup(r Ref) (string, bool) {
	switch r.Of {
	case "Node":
		return v.Node, true
	case "Labels":
		s, ok := v.Labels[r.Key]
		return s, ok
	case "Vars":
		s, ok := v.Vars[r.Key]
		return s, ok
	}
	return "", false
}

// Parts returns the literal text of s and the values it puts in, without rendering: s
// rendered is its texts with the values between them. It is how long a template renders to,
// for any node, without filling it in for each.
func Parts(s string) (texts []string, refs []Ref, err error) {
	t, err := parseValues(s)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range t.Tree.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			texts = append(texts, string(n.Text))
		case *parse.ActionNode:
			f := n.Pipe.Cmds[0].Args[0].(*parse.FieldNode) // valueOnly saw to it
			r := Ref{Of: f.Ident[0]}
			if len(f.Ident) == 2 {
				r.Key = f.Ident[1]
			}
			refs = append(refs, r)
		}
	}
	return texts, refs, nil
}

// parseValues parses s as Render will, and refuses anything but values. text/template is a
// language (range, if, define, template and functions make it one), and a template that loops
// or recurses would run the controller out of time or memory; values cannot.
func parseValues(s string) (*template.Template, error) {
	t, err := template.New("").Option("missingkey=error").Parse(s)
	if err != nil {
		return nil, err
	}
	if len(t.Templates()) > 1 {
		return nil, fmt.Errorf("only values may be used ({{.Node}}, {{.Labels.k}}, {{.Vars.k}}): {{define}} and {{block}} are not")
	}
	for _, n := range t.Tree.Root.Nodes {
		if err := valueOnly(n); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// valueOnly accepts plain text, a comment, or an action that is one of the three values.
func valueOnly(n parse.Node) error {
	switch n := n.(type) {
	case *parse.TextNode, *parse.CommentNode:
		return nil
	case *parse.ActionNode:
		if p := n.Pipe; len(p.Decl) == 0 && len(p.Cmds) == 1 && len(p.Cmds[0].Args) == 1 {
			if f, ok := p.Cmds[0].Args[0].(*parse.FieldNode); ok && valueField(f.Ident) {
				return nil
			}
		}
		return fmt.Errorf("{{%s}} is not a value: only {{.Node}}, {{.Labels.k}} and {{.Vars.k}} may be used", clip(n.Pipe.String(), 60))
	default:
		return fmt.Errorf("%s is not a value: only {{.Node}}, {{.Labels.k}} and {{.Vars.k}} may be used, not actions like range, if, with or template", clip(n.String(), 60))
	}
}

func valueField(ident []string) bool {
	switch {
	case len(ident) == 1:
		return ident[0] == "Node"
	case len(ident) == 2:
		return ident[0] == "Labels" || ident[0] == "Vars"
	}
	return false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// boundedWriter is a strings.Builder that refuses to grow past max.
type boundedWriter struct {
	strings.Builder
	max int
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.max {
		return 0, fmt.Errorf("renders to more than %d bytes", w.max)
	}
	return w.Builder.Write(p)
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// cleanError keeps what says which key is missing.
func cleanError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "map has no entry for key"); i >= 0 {
		return fmt.Errorf("%s", msg[i:])
	}
	return err
}
