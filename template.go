package hq

import (
	"fmt"
	"maps"
	"path"
	"slices"

	"github.com/meshhq/hq/tmpl"
)

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

// Templated reports whether any field of r is a template.
func (r Resource) Templated() bool {
	found := false
	c := r.clone()
	c.templated(func(_ string, s *string) { found = found || tmpl.Is(*s) })
	return found
}

// clone copies the slices and map a rendering writes into.
func (r Resource) clone() Resource {
	r.Command, r.Validate, r.Env = slices.Clone(r.Command), slices.Clone(r.Validate), maps.Clone(r.Env)
	r.Volumes, r.Ports = slices.Clone(r.Volumes), slices.Clone(r.Ports)
	return r
}

// checkTemplates reports every field of r whose template does not parse or is not values only.
func (r Resource) checkTemplates(add func(field, format string, args ...any)) {
	c := r.clone()
	c.templated(func(field string, s *string) {
		if tmpl.Is(*s) {
			if err := tmpl.Check(*s); err != nil {
				add(field, "is not a valid template: %v", err)
			}
		}
	})
}

// Render returns r with every template in it filled in from v. A key v lacks is an error
// that names the field and the key; so is a rendered path, link target, volume, port or user
// that the rule for a literal one would refuse, since a value may hold ".." or a ':'.
func (r Resource) Render(v tmpl.Values) (Resource, error) {
	out := r.clone()
	var first error
	out.templated(func(field string, s *string) {
		if first != nil || !tmpl.Is(*s) {
			return
		}
		rendered, err := tmpl.Render(*s, v)
		if err != nil {
			first = fmt.Errorf("%s %s: %w", r.Name, field, err)
			return
		}
		*s = rendered
	})
	if first == nil {
		first = out.checkRendered(r)
	}
	return out, first
}

// checkRendered holds a rendered path, link target, volume, port and user to the rules a
// literal one is held to at upload.
func (r Resource) checkRendered(src Resource) error {
	if tmpl.Is(src.Path) && !validPath(r.Path) {
		return fmt.Errorf("%s path: renders to %q, which is not absolute and clean (no '..', no trailing '/'), or is /", r.Name, clip(r.Path, 200))
	}
	if (tmpl.Is(src.Target) || tmpl.Is(src.Path)) && r.Kind == KindSymlink && climbsOut(path.Dir(r.Path), r.Target) {
		return fmt.Errorf("%s target: renders to %q, which climbs above / from %s", r.Name, clip(r.Target, 200), path.Dir(r.Path))
	}
	if slices.ContainsFunc(src.Volumes, tmpl.Is) {
		if i, p := volumesProblem(r.Volumes); p != "" {
			return fmt.Errorf("%s volumes[%d]: renders to %q: %s", r.Name, i, clip(r.Volumes[i], 200), p)
		}
	}
	if slices.ContainsFunc(src.Ports, tmpl.Is) {
		if i, p := portsProblem(r.Ports, false); p != "" {
			return fmt.Errorf("%s ports[%d]: renders to %q: %s", r.Name, i, clip(r.Ports[i], 200), p)
		}
	}
	if tmpl.Is(src.User) && !validUser(r.User) {
		return fmt.Errorf("%s user: renders to %q: %s", r.Name, clip(r.User, 200), userRule)
	}
	return nil
}
