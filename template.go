package hq

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

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
	if r.Health != nil {
		each("health.http", &r.Health.HTTP)
	}
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
	r.SecretEnv, r.Secrets, r.SecretPins = maps.Clone(r.SecretEnv), slices.Clone(r.Secrets), maps.Clone(r.SecretPins)
	if r.Health != nil {
		h := *r.Health
		h.Command = slices.Clone(h.Command)
		r.Health = &h
	}
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
// that names the field and the key; so is a rendered path, link target, command, env value,
// volume, port, user or health URL that the rule for a literal one would refuse, since a value may hold
// ".." or a ':' or a NUL, or be empty.
func (r Resource) Render(v tmpl.Values) (Resource, error) {
	left := math.MaxInt
	return r.RenderWithin(v, &left)
}

// RenderWithin is Render with *left the bytes its templates may still render to, all fields
// together; each rendered field takes its length from it. Past it rendering stops with an
// error, so a resource that would render far beyond it is never built.
func (r Resource) RenderWithin(v tmpl.Values, left *int) (Resource, error) {
	out := r.clone()
	var first error
	out.templated(func(field string, s *string) {
		if first != nil || !tmpl.Is(*s) {
			return
		}
		rendered, err := tmpl.RenderWithin(*s, v, *left)
		if err != nil {
			first = fmt.Errorf("%s %s: %w", r.Name, field, err)
			return
		}
		*left -= len(rendered)
		*s = rendered
	})
	if first == nil {
		first = out.checkRendered(r)
	}
	return out, first
}

// checkRendered holds a rendered path, link target, volume, port, user and health URL to the
// rules a literal one is held to at upload.
func (r Resource) checkRendered(src Resource) error {
	if tmpl.Is(src.Path) && !validPath(r.Path) {
		if r.Path == "" {
			return fmt.Errorf("%s path: renders to nothing, not an absolute path", r.Name)
		}
		return fmt.Errorf("%s path: as rendered, %s", r.Name, pathProblem(r.Path))
	}
	if tmpl.Is(src.Target) && r.Kind == KindSymlink && (r.Target == "" || strings.ContainsRune(r.Target, 0)) {
		return fmt.Errorf("%s target: renders to %q: a link's target is not empty and holds no NUL", r.Name, clip(r.Target, 200))
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
	if slices.ContainsFunc(src.Command, tmpl.Is) && !validCommand(r.Command) {
		return fmt.Errorf("%s command: renders to %q: %s", r.Name, clipAll(r.Command, 200), commandRule)
	}
	if slices.ContainsFunc(src.Validate, tmpl.Is) && !validCommand(r.Validate) {
		return fmt.Errorf("%s validate: renders to %q: %s", r.Name, clipAll(r.Validate, 200), commandRule)
	}
	for _, k := range slices.Sorted(maps.Keys(src.Env)) {
		if tmpl.Is(src.Env[k]) && !validEnvValue(r.Env[k]) {
			return fmt.Errorf("%s env.%s: renders to %q: %s", r.Name, k, clip(r.Env[k], 200), envValueRule)
		}
	}
	if tmpl.Is(src.User) && !validUser(r.User) {
		return fmt.Errorf("%s user: renders to %q: %s", r.Name, clip(r.User, 200), userRule)
	}
	if src.Health != nil && tmpl.Is(src.Health.HTTP) && !validHealthURL(r.Health.HTTP) {
		return fmt.Errorf("%s health.http: renders to %q: %s", r.Name, clip(r.Health.HTTP, 200), healthURLRule)
	}
	return nil
}

// clipAll is a list's elements, each clipped to n bytes.
func clipAll(list []string, n int) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = clip(s, n)
	}
	return out
}

// MaxDeclaration bounds a node's declaration: its resources, every template filled in, as they
// are encoded for the node, all its modules together. It is twice the largest upload, so a
// module uploaded at the largest size fits beside others; what only templates make larger than
// it is refused when it is written (see Size), and never composed.
const MaxDeclaration = 16 << 20

// Size is how long a module's resources encode to (json.Marshal) once a node's values fill
// their templates in, worked out without filling them in: a template is text with values put
// in, so it renders to its text and, for each value it puts in, that value. Checking a fleet's
// declarations against MaxDeclaration costs some additions a node, not a rendering.
type Size struct {
	// base is the encoding's length with every template's values taken out.
	base int
	// uses counts how often each value is put in.
	uses map[tmpl.Ref]int
}

// SizeOf is the Size of resources, which ValidateModule accepts.
func SizeOf(resources []Resource) (Size, error) {
	enc, err := json.Marshal(resources)
	if err != nil {
		return Size{}, err
	}
	sz := Size{base: len(enc)}
	for _, r := range resources {
		if !r.Templated() {
			continue
		}
		c := r.clone()
		c.templated(func(_ string, s *string) {
			if !tmpl.Is(*s) {
				return
			}
			texts, refs, perr := tmpl.Parts(*s)
			if perr != nil {
				err = perr
				return
			}
			sz.base -= EncodedLen(*s)
			for _, t := range texts {
				sz.base += EncodedLen(t)
			}
			if sz.uses == nil {
				sz.uses = map[tmpl.Ref]int{}
			}
			for _, ref := range refs {
				sz.uses[ref]++
			}
		})
	}
	return sz, err
}

// Templated reports whether the size depends on a node's values.
func (s Size) Templated() bool { return len(s.uses) > 0 }

// For is how long the resources encode to filled in from v. It is never less than what
// json.Marshal writes for them: the same for valid UTF-8, as JSON decoding makes every text
// that reaches the store, and a value v lacks counts nothing (that template is refused on
// its own).
func (s Size) For(v tmpl.Values) int {
	n := s.base
	for ref, times := range s.uses {
		if val, ok := v.Lookup(ref); ok {
			n += times * EncodedLen(val)
		}
	}
	return n
}

// EncodedLen is how many bytes json.Marshal writes for s inside its quotes: escaping as it
// does, with '<', '>' and '&' as \u003c and so on.
func EncodedLen(s string) int {
	n := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			switch {
			case b == '\\' || b == '"' || b == '\b' || b == '\f' || b == '\n' || b == '\r' || b == '\t':
				n += 2
			case b < 0x20 || b == '<' || b == '>' || b == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1, c == '\u2028', c == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
