package hq

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/meshhq/hq/debversion"
	"github.com/meshhq/hq/paths"
	"github.com/meshhq/hq/tmpl"
)

// MaxNameLen bounds node, module, resource and group names.
const MaxNameLen = 64

// ValidName reports whether s may name a node, module, resource or group: letters, digits,
// '.', '_' and '-', starting with a letter or digit. No '/' so that module/resource is unambiguous.
func ValidName(s string) bool {
	if s == "" || len(s) > MaxNameLen {
		return false
	}
	for i, c := range s {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// NameError is the *Error for a bad name in a URL or body.
func NameError(what, name string) *Error {
	e := Errorf(CodeInvalid, "invalid %s name %q: use letters, digits, '.', '_' or '-', at most %d, starting with a letter or digit", what, name, MaxNameLen)
	e.Details = []FieldError{{Field: what, Message: fmt.Sprintf("%q is not a valid name", name)}}
	return e
}

// ValidateModule checks every resource of a module upload. It returns nil or an *Error with
// code invalid and one detail per problem found.
func ValidateModule(resources []Resource) error {
	var errs []FieldError
	add := func(i int, field, format string, args ...any) {
		errs = append(errs, FieldError{Field: fmt.Sprintf("resources[%d].%s", i, field), Message: fmt.Sprintf(format, args...)})
	}
	names := map[string]int{}
	var claims []paths.Claim
	for i, r := range resources {
		if !ValidName(r.Name) {
			add(i, "name", "must be letters, digits, '.', '_' or '-', at most %d, starting with a letter or digit", MaxNameLen)
		} else if j, dup := names[r.Name]; dup {
			add(i, "name", "%q is already the name of resources[%d]", r.Name, j)
		} else {
			names[r.Name] = i
		}
		validateKind(r, func(field, format string, args ...any) { add(i, field, format, args...) })
		r.checkTemplates(func(field, format string, args ...any) { add(i, field, format, args...) })
		if r.Path != "" && validPath(r.Path) {
			claims = append(claims, r.PathClaim(i, true))
		}
		if r.Group != "" && !ValidName(r.Group) {
			add(i, "group", "must be letters, digits, '.', '_' or '-', at most %d", MaxNameLen)
		}
	}
	for _, o := range paths.Overlaps(claims) {
		ref := func(c paths.Claim) string { return fmt.Sprintf("resources[%d] %q", c.ID, resources[c.ID].Name) }
		add(o.Inner.ID, "path", "%s", o.Describe(ref(o.Outer), ref(o.Inner)))
	}
	for i, r := range resources {
		for _, dep := range r.RestartOn {
			if _, ok := names[dep]; !ok || dep == r.Name {
				add(i, "restart_on", "%q is not another resource of this module", dep)
			}
		}
	}
	if len(errs) > 0 {
		return &Error{Code: CodeInvalid, Message: fmt.Sprintf("%d problem(s) in the module's resources", len(errs)), Details: errs}
	}
	return nil
}

// allowed lists the kind-specific fields each kind accepts; name, kind, gate and group are common.
var allowed = map[string][]string{
	KindFile:      {"path", "content", "content_base64", "mode", "validate", "secret_pins"},
	KindDirectory: {"path", "mode"},
	KindSymlink:   {"path", "target"},
	KindAbsent:    {"path"},
	KindAction:    {"command"},
	KindService:   {"command", "env", "restart_on", "health", "secret_env", "secret_pins"},
	KindPackage:   {"package", "version", "state", "source", "scripts"},
	KindContainer: {"image", "command", "env", "volumes", "ports", "network", "user", "health", "restart_on", "cpus", "memory", "log_max_size", "restart", "secret_env", "secrets", "secret_pins"},
	KindJob:       {"image", "command", "env", "volumes", "network", "user", "cpus", "memory", "log_max_size"},
}

func validateKind(r Resource, add func(field, format string, args ...any)) {
	fields, ok := allowed[r.Kind]
	if !ok {
		add("kind", "unknown kind %q; one of %s", r.Kind, strings.Join(Kinds, ", "))
		return
	}
	for _, f := range r.setFields() {
		if !slices.Contains(fields, f) {
			add(f, "not a field of a %s", r.Kind)
		}
	}
	if slices.Contains(fields, "path") && !validPath(r.Path) {
		add("path", "%s", pathProblem(r.Path))
	}
	// A container or a job without a command runs its image's own.
	commandOptional := r.Kind == KindContainer || r.Kind == KindJob
	if slices.Contains(fields, "command") && (r.Command != nil || !commandOptional) && !validCommand(r.Command) {
		add("command", "%s", commandRule)
	}
	if r.Mode != "" && !validMode(r.Mode) {
		add("mode", "must be octal, like \"0644\"")
	}
	if r.Content != "" && r.ContentBase64 != "" {
		add("content_base64", "give content or content_base64, not both")
	}
	if _, err := base64.StdEncoding.DecodeString(r.ContentBase64); err != nil {
		add("content_base64", "is not standard base64")
	}
	if len(r.Validate) > 0 && !validCommand(r.Validate) {
		add("validate", "must be a command whose first element is not empty")
	}
	if r.Kind == KindSymlink {
		switch {
		case r.Target == "" || strings.ContainsRune(r.Target, 0):
			add("target", "is required")
		case r.Path != "" && climbsOut(path.Dir(r.Path), r.Target):
			add("target", "climbs above / from %s: a link must point inside the root", path.Dir(r.Path))
		}
	}
	if r.Health != nil && slices.Contains(fields, "health") {
		validateHealth(r, add)
	}
	if r.Kind == KindPackage {
		validatePackage(r, add)
	}
	if slices.Contains(fields, "image") {
		validateContainer(r, fields, add)
	}
	validateSecrets(r, add)
	for k, v := range r.Env {
		switch {
		case k == "" || strings.ContainsAny(k, "=\x00"):
			add("env", "%q is not a variable name", k)
		case !validEnvValue(v):
			add("env."+k, "%s", envValueRule)
		}
	}
}

// setFields names the kind-specific fields r sets.
func (r Resource) setFields() []string {
	var set []string
	for _, f := range []struct {
		name string
		on   bool
	}{
		{"path", r.Path != ""}, {"content", r.Content != ""}, {"content_base64", r.ContentBase64 != ""},
		{"mode", r.Mode != ""}, {"validate", r.Validate != nil}, {"target", r.Target != ""},
		{"command", r.Command != nil}, {"env", r.Env != nil}, {"restart_on", r.RestartOn != nil},
		{"health", r.Health != nil}, {"package", r.Package != ""}, {"version", r.Version != ""},
		{"state", r.State != ""}, {"source", r.Source != ""}, {"scripts", r.Scripts},
		{"image", r.Image != ""}, {"volumes", r.Volumes != nil}, {"ports", r.Ports != nil},
		{"network", r.Network != ""}, {"user", r.User != ""},
		{"cpus", r.Cpus != ""}, {"memory", r.Memory != ""}, {"log_max_size", r.LogMaxSize != ""}, {"restart", r.Restart != ""},
		{"secret_env", r.SecretEnv != nil}, {"secrets", r.Secrets != nil}, {"secret_pins", r.SecretPins != nil},
	} {
		if f.on {
			set = append(set, f.name)
		}
	}
	return set
}

// validatePackage checks what only a package has: Debian's rules for its name and version,
// a state hostd knows, and a source that is a .deb path under the root.
func validatePackage(r Resource, add func(field, format string, args ...any)) {
	if !ValidPackageName(r.Package) {
		add("package", "must be a Debian package name: at least 2 of lowercase letters, digits, '+', '-' and '.', starting with a letter or digit")
	}
	if r.Version != "" && !debversion.Valid(r.Version) {
		add("version", "must be a Debian version: [epoch:]upstream[-revision], the upstream starting with a digit, of letters, digits and '.', '+', '~', '-'")
	}
	switch r.State {
	case "", PackagePresent:
	case PackageAbsent:
		if r.Version != "" {
			add("version", "an absent package has no version: whatever version is installed is removed")
		}
		if r.Source != "" {
			add("source", "an absent package has no source")
		}
		if r.Scripts {
			add("scripts", "an absent package installs nothing: removing it runs the scripts it was installed with")
		}
	default:
		add("state", "must be %q or %q, not %q", PackagePresent, PackageAbsent, r.State)
	}
	if r.Source != "" && !validPath(r.Source) {
		add("source", "must be the absolute and clean path of a .deb file (no '..', no trailing '/')")
	}
	if r.Group != "" {
		// A group rolls every member back when one fails; dpkg cannot put a package back as it was.
		add("group", "a package cannot be in a group: installing or removing one cannot be rolled back")
	}
}

// validateHealth checks a service's or a container's health: a service is checked over http
// only, a container by http or by a command run in it, one of the two.
func validateHealth(r Resource, add func(field, format string, args ...any)) {
	h := r.Health
	if r.Kind != KindContainer {
		if h.Command != nil {
			add("health.command", "is run in a container: a %s's health is checked over http only", r.Kind)
		}
		if !validHealthURL(h.HTTP) && !tmpl.Is(h.HTTP) {
			add("health.http", "%s", healthURLRule)
		}
		return
	}
	switch {
	case h.HTTP != "" && h.Command != nil:
		add("health", "give http or command, not both")
	case h.Command != nil:
		if !validCommand(h.Command) {
			add("health.command", "must be a non-empty list whose first element is not empty")
		}
	case h.HTTP == "":
		add("health", "needs http (a URL that must answer 2xx) or command (run in the container, must exit 0)")
	case !validHealthURL(h.HTTP) && !tmpl.Is(h.HTTP):
		add("health.http", "%s", healthURLRule)
	}
}

// ValidPackageName reports whether s is a Debian package name (Debian Policy 5.6.1): two or
// more lowercase letters, digits, '+', '-' and '.', starting with a letter or digit.
func ValidPackageName(s string) bool {
	if len(s) < 2 || len(s) > 128 {
		return false
	}
	for i, c := range s {
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '+' && c != '-' && c != '.') {
			return false
		}
	}
	return true
}

// clip cuts s to n bytes for a message, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// pathProblem says what is wrong with p, a path validPath refuses: the one rule it breaks.
func pathProblem(p string) string {
	q := strconv.Quote(clip(p, 200))
	switch {
	case p == "":
		return "is required: an absolute path, like /etc/app.conf"
	case !strings.HasPrefix(p, "/"):
		return q + " must be absolute (start with /)"
	case p == "/":
		return "must name something under /, not / itself"
	case strings.ContainsRune(p, 0):
		return q + " holds a NUL byte"
	case slices.Contains(strings.Split(p, "/"), ".."):
		return q + " must not climb with '..'"
	}
	return fmt.Sprintf("%s must be clean: %q (no trailing '/', no '//' or '/./')", q, clip(path.Clean(p), 200))
}

func validPath(p string) bool {
	return strings.HasPrefix(p, "/") && p != "/" && path.Clean(p) == p &&
		!strings.ContainsRune(p, 0) && !slices.Contains(strings.Split(p, "/"), "..")
}

// climbsOut reports whether a relative link target, followed from dir, goes above "/". Under
// a host root other than "/" that would leave the root, where "/.." does not stop it.
func climbsOut(dir, target string) bool {
	if strings.HasPrefix(target, "/") {
		return false // absolute targets are joined under the root by hostd
	}
	depth := len(strings.Split(strings.Trim(dir, "/"), "/"))
	if dir == "/" {
		depth = 0
	}
	for _, part := range strings.Split(target, "/") {
		switch part {
		case "..":
			if depth--; depth < 0 {
				return true
			}
		case "", ".":
		default:
			depth++
		}
	}
	return false
}

// The rules for a command and an env value, which a rendered one is held to as well.
const (
	commandRule  = "must be a non-empty list whose first element is not empty, and no element may hold a NUL"
	envValueRule = "an env value may not hold a NUL"
)

// validEnvValue reports whether v can be passed in a process's environment.
func validEnvValue(v string) bool { return !strings.ContainsRune(v, 0) }

func validCommand(c []string) bool {
	if len(c) == 0 || c[0] == "" {
		return false
	}
	for _, a := range c {
		if strings.ContainsRune(a, 0) {
			return false
		}
	}
	return true
}

func validMode(m string) bool {
	v, err := strconv.ParseUint(m, 8, 32)
	return err == nil && v <= 0o7777 && len(m) <= 5
}

// ParseMode returns the permission bits of a valid mode, or def when mode is empty.
func ParseMode(mode string, def uint32) uint32 {
	if mode == "" {
		return def
	}
	v, _ := strconv.ParseUint(mode, 8, 32)
	return uint32(v)
}

// healthURLRule is what validHealthURL asks. A templated URL is held to it once rendered for
// a node (Resource.Render): before, its {{…}} is no URL.
const healthURLRule = "must be an http:// or https:// URL"

func validHealthURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
