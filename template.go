package hq

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
)

// Values are what a resource's templates may use: {{.Node}}, {{.Labels.k}} and {{.Vars.k}}.
// The controller fills them in when it composes a node's declaration, so what is digested,
// signed and applied is concrete; a key the node lacks is an error, never an empty string.
type Values struct {
	Node   string
	Labels map[string]string
	Vars   map[string]string
}

// MaxRendered bounds what one field renders to. A template is text with values put in, so this
// is only reached by a field already near the body limit with long values in it.
const MaxRendered = 1 << 20

// templated names the fields of a resource that may hold a template, and reaches them.
func (r *Resource) templated(each func(field string, s *string)) {
	each("path", &r.Path)
	each("content", &r.Content)
	each("target", &r.Target)
	for i := range r.Command {
		each(fmt.Sprintf("command[%d]", i), &r.Command[i])
	}
	for i := range r.Validate {
		each(fmt.Sprintf("validate[%d]", i), &r.Validate[i])
	}
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		v := r.Env[k]
		each("env."+k, &v)
		r.Env[k] = v
	}
	for i := range r.Volumes {
		each(fmt.Sprintf("volumes[%d]", i), &r.Volumes[i])
	}
	for i := range r.Ports {
		each(fmt.Sprintf("ports[%d]", i), &r.Ports[i])
	}
	each("user", &r.User)
}

func isTemplate(s string) bool { return strings.Contains(s, "{{") }

// Templated reports whether any field of r is a template.
func (r Resource) Templated() bool {
	found := false
	c := r.clone()
	c.templated(func(_ string, s *string) { found = found || isTemplate(*s) })
	return found
}

// clone copies the slices and map a rendering writes into.
func (r Resource) clone() Resource {
	r.Command, r.Validate, r.Env = slices.Clone(r.Command), slices.Clone(r.Validate), maps.Clone(r.Env)
	r.Volumes, r.Ports = slices.Clone(r.Volumes), slices.Clone(r.Ports)
	return r
}

// parseTemplate parses one field's template as rendering will, and refuses anything but values.
// text/template is a language (range, if, define, template and functions make it one), and a
// template that loops or recurses would run the controller out of time or memory when it
// composes; values cannot.
func parseTemplate(s string) (*template.Template, error) {
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

// checkTemplates reports every field of r whose template does not parse or is not values only.
func (r Resource) checkTemplates(add func(field, format string, args ...any)) {
	c := r.clone()
	c.templated(func(field string, s *string) {
		if isTemplate(*s) {
			if _, err := parseTemplate(*s); err != nil {
				add(field, "is not a valid template: %v", err)
			}
		}
	})
}

// Render returns r with every template in it filled in from v. A key v lacks is an error
// that names the field and the key; so is a rendered path, link target, volume, port or user
// that the rule for a literal one would refuse, since a value may hold ".." or a ':'.
func (r Resource) Render(v Values) (Resource, error) {
	out := r.clone()
	var first error
	data := map[string]any{"Node": v.Node, "Labels": nonNil(v.Labels), "Vars": nonNil(v.Vars)}
	out.templated(func(field string, s *string) {
		if first != nil || !isTemplate(*s) {
			return
		}
		t, err := parseTemplate(*s)
		b := boundedWriter{max: MaxRendered}
		if err == nil {
			err = t.Execute(&b, data)
		}
		if err != nil {
			first = fmt.Errorf("%s %s: %w", r.Name, field, cleanTemplateError(err))
			return
		}
		*s = b.String()
	})
	if first == nil {
		first = out.checkRendered(r)
	}
	return out, first
}

// checkRendered holds a rendered path, link target, volume, port and user to the rules a
// literal one is held to at upload.
func (r Resource) checkRendered(src Resource) error {
	if isTemplate(src.Path) && !validPath(r.Path) {
		return fmt.Errorf("%s path: renders to %q, which is not absolute and clean (no '..', no trailing '/'), or is /", r.Name, clip(r.Path, 200))
	}
	if (isTemplate(src.Target) || isTemplate(src.Path)) && r.Kind == KindSymlink && climbsOut(path.Dir(r.Path), r.Target) {
		return fmt.Errorf("%s target: renders to %q, which climbs above / from %s", r.Name, clip(r.Target, 200), path.Dir(r.Path))
	}
	if slices.ContainsFunc(src.Volumes, isTemplate) {
		if i, p := volumesProblem(r.Volumes); p != "" {
			return fmt.Errorf("%s volumes[%d]: renders to %q: %s", r.Name, i, clip(r.Volumes[i], 200), p)
		}
	}
	if slices.ContainsFunc(src.Ports, isTemplate) {
		if i, p := portsProblem(r.Ports, false); p != "" {
			return fmt.Errorf("%s ports[%d]: renders to %q: %s", r.Name, i, clip(r.Ports[i], 200), p)
		}
	}
	if isTemplate(src.User) && !validUser(r.User) {
		return fmt.Errorf("%s user: renders to %q: %s", r.Name, clip(r.User, 200), userRule)
	}
	return nil
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

// cleanTemplateError keeps what says which key is missing.
func cleanTemplateError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "map has no entry for key"); i >= 0 {
		return fmt.Errorf("%s", msg[i:])
	}
	return err
}
