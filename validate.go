package hq

import (
	"encoding/base64"
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

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
	KindFile:      {"path", "content", "content_base64", "mode", "validate"},
	KindDirectory: {"path", "mode"},
	KindSymlink:   {"path", "target"},
	KindAbsent:    {"path"},
	KindAction:    {"command"},
	KindService:   {"command", "env", "restart_on", "health"},
	KindPackage:   {"package", "version", "state", "source", "scripts"},
	KindContainer: {"image", "command", "env", "volumes", "ports", "network", "user", "health", "restart_on"},
	KindJob:       {"image", "command", "env", "volumes", "network", "user"},
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
		add("path", "must be absolute and clean (no '..', no trailing '/'), not /")
	}
	// A container or a job without a command runs its image's own.
	commandOptional := r.Kind == KindContainer || r.Kind == KindJob
	if slices.Contains(fields, "command") && (r.Command != nil || !commandOptional) && !validCommand(r.Command) {
		add("command", "must be a non-empty list whose first element is not empty")
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
	for k := range r.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			add("env", "%q is not a variable name", k)
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
		if !validHealthURL(h.HTTP) {
			add("health.http", "must be an http:// or https:// URL")
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
	case !validHealthURL(h.HTTP):
		add("health.http", "must be an http:// or https:// URL")
	}
}

// validateContainer checks what only a container or a job has. A field holding a template is
// held to the same rules when it is rendered; here only what a template cannot change is.
func validateContainer(r Resource, fields []string, add func(field, format string, args ...any)) {
	if p := imageProblem(r.Image); p != "" {
		add("image", "%s", p)
	}
	if i, p := volumesProblem(r.Volumes); p != "" {
		add(fmt.Sprintf("volumes[%d]", i), "%s", p)
	}
	switch r.Network {
	case "", NetworkHost, NetworkNone:
	default:
		add("network", "must be %q (the node's network) or %q (none), or left out for the default; not %q", NetworkHost, NetworkNone, r.Network)
	}
	if len(r.Ports) > 0 && slices.Contains(fields, "ports") {
		if i, p := portsProblem(r.Ports, true); p != "" {
			add(fmt.Sprintf("ports[%d]", i), "%s", p)
		}
		switch r.Network {
		case NetworkHost:
			add("ports", "host networking publishes nothing: the container listens on the node's ports itself")
		case NetworkNone:
			add("ports", "a container without a network has no ports to publish")
		}
	}
	if r.User != "" && !tmpl.Is(r.User) && !validUser(r.User) {
		add("user", "%s", userRule)
	}
}

// Networks a container or a job may ask for instead of the default one.
const (
	NetworkHost = "host"
	NetworkNone = "none"
)

const pinnedRule = "must be pinned by digest (name@sha256:…): a tag can move, and a moved tag would turn a build into a deployment"

// The image grammar is compiled when an image is first checked, not at every start: hostd
// links this package, and compiling these was most of what its start spent in package init.
var (
	imageHost      = lazyRegexp(`^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::[0-9]{1,5})?$`)
	imageComponent = lazyRegexp(`^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$`)
	imageTag       = lazyRegexp(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	imageDigest    = lazyRegexp(`^sha256:[0-9a-f]{64}$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// imageProblem says what is wrong with an image reference, or "". Only a digest names one
// image for good, so it is required; a tag before it is allowed and changes nothing. A
// template is refused: the digest in the module is what is reviewed.
func imageProblem(s string) string {
	switch {
	case s == "":
		return "is required and " + pinnedRule
	case tmpl.Is(s):
		return pinnedRule + "; a template is not one: the digest written in the module is what is reviewed"
	}
	ref, digest, pinned := strings.Cut(s, "@")
	if !pinned {
		return pinnedRule
	}
	if !imageDigest().MatchString(digest) {
		return pinnedRule + "; the digest is \"sha256:\" and 64 lowercase hex digits"
	}
	if !validImageName(ref) {
		return "is not an image reference: [host[:port]/]name[:tag]@sha256:…, the name of lowercase letters, digits and '.', '_', '-' and '/'"
	}
	return ""
}

// validImageName reports whether ref is a repository name, with an optional registry host
// first and an optional tag last, as Docker and podman read one.
func validImageName(ref string) bool {
	if slash, colon := strings.LastIndexByte(ref, '/'), strings.LastIndexByte(ref, ':'); colon > slash {
		if !imageTag().MatchString(ref[colon+1:]) {
			return false
		}
		ref = ref[:colon]
	}
	if ref == "" || len(ref) > 255 {
		return false
	}
	parts := strings.Split(ref, "/")
	// The first part is a registry when it looks like a host: a name with a dot or a port, or localhost.
	if len(parts) > 1 && (strings.ContainsAny(parts[0], ".:") || parts[0] == "localhost") {
		if !imageHost().MatchString(parts[0]) {
			return false
		}
		parts = parts[1:]
	}
	for _, p := range parts {
		if !imageComponent().MatchString(p) {
			return false
		}
	}
	return true
}

// volumeProblem says what is wrong with one volume (ParseVolume), or "".
func volumeProblem(v string) (container, problem string) {
	_, target, _, err := ParseVolume(v)
	if err != nil {
		return "", err.Error()
	}
	return target, ""
}

// volumesProblem checks every volume and that no two mount at the same container path; it
// returns the index of the first volume refused and why, or "".
func volumesProblem(vols []string) (int, string) {
	at := map[string]int{}
	for i, v := range vols {
		c, p := volumeProblem(v)
		if p != "" {
			return i, p
		}
		if j, dup := at[c]; dup {
			return i, fmt.Sprintf("volumes[%d] already mounts at %s", j, c)
		}
		at[c] = i
	}
	return 0, ""
}

// portBinding is one published port: the host address (empty for every address), the host and
// container ports, and the protocol.
type portBinding struct{ ip, host, container, proto string }

const portForm = `must be "[IP:]HOSTPORT:CONTAINERPORT" with an optional "/tcp" or "/udp", an IPv6 address in brackets ("[::1]:8080:80")`

// parsePort reads one published port. With lenient, a part holding a template is not checked:
// it is when it has been rendered.
func parsePort(s string, lenient bool) (portBinding, string) {
	skip := func(part string) bool { return lenient && tmpl.Is(part) }
	b := portBinding{proto: "tcp"}
	rest := s
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		b.proto, rest = rest[i+1:], rest[:i]
		if b.proto != "tcp" && b.proto != "udp" && !skip(b.proto) {
			return b, fmt.Sprintf("the protocol is tcp or udp, not %q", clip(b.proto, 40))
		}
	}
	bracketed := strings.HasPrefix(rest, "[")
	if bracketed {
		end := strings.Index(rest, "]:")
		if end < 0 {
			return b, portForm
		}
		b.ip, rest = rest[1:end], rest[end+2:]
	}
	parts := strings.Split(rest, ":")
	switch {
	case len(parts) == 3 && !bracketed:
		b.ip, parts = parts[0], parts[1:]
	case len(parts) != 2:
		return b, portForm
	}
	b.host, b.container = parts[0], parts[1]
	if (bracketed || b.ip != "") && !skip(b.ip) {
		a, err := netip.ParseAddr(b.ip)
		if err != nil || a.Zone() != "" || a.Is6() != bracketed {
			return b, fmt.Sprintf("%q is not an IPv4 address, or an IPv6 one in brackets", clip(b.ip, 60))
		}
		b.ip = a.String()
	}
	for _, p := range []string{b.host, b.container} {
		if !skip(p) && !validPortNumber(p) {
			return b, fmt.Sprintf("port %q is not a number from 1 to 65535", clip(p, 20))
		}
	}
	return b, ""
}

func validPortNumber(s string) bool {
	if s == "" || len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return false
	}
	n, _ := strconv.Atoi(s)
	return n >= 1 && n <= 65535
}

// portsProblem checks every published port and that no two take the same host port; it
// returns the index of the first port refused and why, or "".
func portsProblem(ports []string, lenient bool) (int, string) {
	var seen []portBinding
	for i, s := range ports {
		b, p := parsePort(s, lenient)
		if p != "" {
			return i, p
		}
		if tmpl.Is(b.ip) || tmpl.Is(b.host) || tmpl.Is(b.proto) {
			continue
		}
		for j, o := range seen {
			// No address is every address, so it takes the port on any other one too.
			if o.host == b.host && o.proto == b.proto && (o.ip == b.ip || o.ip == "" || b.ip == "") {
				return i, fmt.Sprintf("host port %s/%s is already published by ports[%d]", b.host, b.proto, j)
			}
		}
		seen = append(seen, b)
	}
	return 0, ""
}

const userRule = "must be a user, or user:group, each a name or a number of letters, digits, '_', '-' and '.', not starting with '-', at most 64 in all"

// validUser reports whether u names a user, and perhaps a group, as uid[:gid] or name[:group].
func validUser(u string) bool {
	if len(u) > 64 {
		return false
	}
	name, group, both := strings.Cut(u, ":")
	return userPart(name) && (!both || userPart(group))
}

func userPart(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
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

func validHealthURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// ValidateReport rejects a report that could not have come from a host.
func ValidateReport(rep Report) error {
	var errs []FieldError
	if rep.Generation < 0 {
		errs = append(errs, FieldError{Field: "generation", Message: "must not be negative"})
	}
	if tr := rep.Transport; tr != nil && (tr.From.IsZero() || tr.To.Before(tr.From) || tr.Reason == "") {
		errs = append(errs, FieldError{Field: "transport", Message: "needs from, a to not before it, and a reason"})
	}
	if h := rep.Host; h != nil {
		if h.HostdVersion == "" || len(h.HostdVersion) > MaxHostFact || len(h.OS) > MaxHostFact || len(h.Arch) > MaxHostFact {
			errs = append(errs, FieldError{Field: "host", Message: fmt.Sprintf("needs a hostd_version, and each text at most %d bytes", MaxHostFact)})
		}
	}
	// Keyed by the two names, not by their joined ref: a report of 500 results would
	// otherwise build 500 strings only to look them up.
	seen := seenResults.Get().(map[[2]string]struct{})
	defer putSeenResults(seen)
	for i, r := range rep.Results {
		if !ValidName(r.Module) {
			errs = append(errs, resultError(i, "module", "is not a valid name"))
		}
		if !ValidName(r.Resource) {
			errs = append(errs, resultError(i, "resource", "is not a valid name"))
		}
		if !r.Outcome.Outcome() {
			errs = append(errs, resultError(i, "outcome", "must be applied, failed, held, grouped-pending or pending"))
		}
		key := [2]string{r.Module, r.Resource}
		if _, ok := seen[key]; ok {
			errs = append(errs, resultError(i, "resource", "reported twice"))
		}
		seen[key] = struct{}{}
	}
	if len(errs) > 0 {
		return &Error{Code: CodeInvalid, Message: fmt.Sprintf("%d problem(s) in the report", len(errs)), Details: errs}
	}
	return nil
}

// seenResults are ValidateReport's maps, used again: every report is validated, and at 500
// results the map was a fifth of what a report allocated.
var seenResults = sync.Pool{New: func() any { return make(map[[2]string]struct{}, 512) }}

func putSeenResults(m map[[2]string]struct{}) {
	if len(m) > 4096 {
		return // a report far larger than a fleet's: not kept
	}
	clear(m)
	seenResults.Put(m)
}

func resultError(i int, field, msg string) FieldError {
	return FieldError{Field: fmt.Sprintf("results[%d].%s", i, field), Message: msg}
}
