// Package tmpl is the template language of a resource's fields: text with values put in,
// {{.Node}}, {{.Labels.k}} and {{.Vars.k}} (and {{.Secrets.k}}, which only hostd fills in),
// and nothing else. It is text/template with every
// action but those three refused when a template is parsed, and rendering is bounded, so a
// template can run the controller out of neither time nor memory when it composes a node's
// declaration; a key the node lacks is an error, never an empty string.
package tmpl

import (
	"fmt"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
)

// Values are what a template may use: {{.Node}}, {{.Labels.k}} and {{.Vars.k}}. The controller
// fills them in when it composes a node's declaration, so what is digested, signed and applied
// is concrete.
//
// Secrets are the secrets' values by key. The controller never has them: it renders with
// Secrets nil, which leaves every {{.Secrets.k}} as it is for hostd, which renders those
// alone (RenderSecrets) once it has opened the values sealed to it.
type Values struct {
	Node    string
	Labels  map[string]string
	Vars    map[string]string
	Secrets map[string]string
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
// key; so is a result longer than MaxRendered. With v.Secrets nil every {{.Secrets.k}} is
// left as it is.
func Render(s string, v Values) (string, error) {
	return RenderWithin(s, v, MaxRendered)
}

// RenderWithin is Render with a result longer than max bytes an error: rendering stops at the
// write that would pass max, so what is built never grows far beyond it. A template is text
// and values, so it is rendered by walking its parse tree rather than executed.
func RenderWithin(s string, v Values, max int) (string, error) {
	t, err := parseValues(s)
	if err != nil {
		return "", cleanError(err)
	}
	b := boundedWriter{max: min(max, MaxRendered)}
	keep := v.Secrets == nil && hasSecrets(t)
	for _, n := range t.Tree.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			_, err = b.Write(n.Text)
		case *parse.ActionNode:
			r := refOf(n)
			if keep && r.Of == "Secrets" {
				_, err = b.Write([]byte("{{.Secrets." + r.Key + "}}"))
				break
			}
			val, ok := v.Lookup(r)
			switch {
			case !ok:
				return "", fmt.Errorf("map has no entry for key %q", r.Key)
			case keep && strings.Contains(val, "{{"):
				// hostd reads what this renders as a template of secrets: a value may not add one.
				return "", fmt.Errorf("the value put in for {{%s}} holds \"{{\", which a field that uses a secret cannot take", r)
			}
			_, err = b.Write([]byte(val))
		}
		if err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// RenderSecrets fills in s's secrets from secrets, by key, as hostd does once the controller
// has filled in every other value. A key secrets lacks is an error naming the key, and so is
// any other value: nothing but secrets is left for a node to fill in. No error holds a value.
func RenderSecrets(s string, secrets map[string]string) (string, error) {
	t, err := parseValues(s)
	if err != nil {
		return "", cleanError(err)
	}
	for _, r := range refsOf(t) {
		if r.Of != "Secrets" {
			return "", fmt.Errorf("{{%s}} is left for the node to fill in: only secrets are", r)
		}
	}
	return RenderWithin(s, Values{Secrets: nonNil(secrets)}, MaxRendered)
}

// SecretKeys are the keys of the secrets s puts in, sorted, once each.
func SecretKeys(s string) ([]string, error) {
	t, err := parseValues(s)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, r := range refsOf(t) {
		if r.Of == "Secrets" && !slices.Contains(keys, r.Key) {
			keys = append(keys, r.Key)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func hasSecrets(t *template.Template) bool {
	return slices.ContainsFunc(refsOf(t), func(r Ref) bool { return r.Of == "Secrets" })
}

func refsOf(t *template.Template) []Ref {
	var refs []Ref
	for _, n := range t.Tree.Root.Nodes {
		if a, ok := n.(*parse.ActionNode); ok {
			refs = append(refs, refOf(a))
		}
	}
	return refs
}

// refOf is the value an action of a parsed template puts in (valueOnly saw to its shape).
func refOf(n *parse.ActionNode) Ref {
	f := n.Pipe.Cmds[0].Args[0].(*parse.FieldNode)
	r := Ref{Of: f.Ident[0]}
	if len(f.Ident) == 2 {
		r.Key = f.Ident[1]
	}
	return r
}

// Ref is one value a template puts in: Of is "Node", "Labels", "Vars" or "Secrets", Key the
// label's, var's or secret's key (empty for Node).
type Ref struct {
	Of, Key string
}

// String is the value as a template names it: .Labels.k.
func (r Ref) String() string {
	if r.Key == "" {
		return "." + r.Of
	}
	return "." + r.Of + "." + r.Key
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
	case "Secrets":
		s, ok := v.Secrets[r.Key]
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
			refs = append(refs, refOf(n))
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
		return ident[0] == "Labels" || ident[0] == "Vars" || ident[0] == "Secrets"
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
