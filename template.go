package hq

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
)

// Values are what a resource's templates may use: {{.Node}}, {{.Labels.k}} and {{.Vars.k}}.
// The controller fills them in when it composes a node's declaration, so what is digested,
// signed and applied is concrete; a key the node lacks is an error, never an empty string.
type Values struct {
	Node   string
	Labels map[string]string
	Vars   map[string]string
}

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
	return r
}

// parseTemplate parses one field's template as rendering will.
func parseTemplate(s string) (*template.Template, error) {
	return template.New("").Option("missingkey=error").Parse(s)
}

// checkTemplates reports every field of r whose template does not parse.
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
// that names the field and the key.
func (r Resource) Render(v Values) (Resource, error) {
	out := r.clone()
	var first error
	data := map[string]any{"Node": v.Node, "Labels": nonNil(v.Labels), "Vars": nonNil(v.Vars)}
	out.templated(func(field string, s *string) {
		if first != nil || !isTemplate(*s) {
			return
		}
		t, err := parseTemplate(*s)
		var b strings.Builder
		if err == nil {
			err = t.Execute(&b, data)
		}
		if err != nil {
			first = fmt.Errorf("%s %s: %w", r.Name, field, cleanTemplateError(err))
			return
		}
		*s = b.String()
	})
	return out, first
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
