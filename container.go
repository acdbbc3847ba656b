package hq

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/meshhq/hq/paths"
	"github.com/meshhq/hq/tmpl"
)

// ParseVolume reads a container volume, "HOST:CONTAINER" with an optional ":ro" or ":rw": the
// host path, a path of the module under the node's root held to the rule of every other, and
// the path in the container.
func ParseVolume(v string) (host, target string, readOnly bool, err error) {
	parts := strings.Split(v, ":")
	switch {
	case len(parts) == 3 && parts[2] != "ro" && parts[2] != "rw":
		return "", "", false, fmt.Errorf("the option after the second ':' is \"ro\" or \"rw\", not %q", parts[2])
	case len(parts) != 2 && len(parts) != 3:
		return "", "", false, fmt.Errorf(`must be "HOST:CONTAINER", or "HOST:CONTAINER:ro" to mount it read-only`)
	case !validPath(parts[0]):
		return "", "", false, fmt.Errorf("the host path %s: it is under the root like every path of a module", pathProblem(parts[0]))
	case !validPath(parts[1]):
		return "", "", false, fmt.Errorf("the container path %s", pathProblem(parts[1]))
	}
	return parts[0], parts[1], len(parts) == 3 && parts[2] == "ro", nil
}

// ContainerName is the name hostd gives the container of a module's container or job resource.
func ContainerName(module, resource string) string { return "hq-" + module + "-" + resource }

// While hostd replaces a container it creates the new one under the name with ContainerNext
// and keeps the old one under the name with ContainerPrev. A resource's name may not end in
// either, so no container of a resource is ever named as another's staged one.
const (
	ContainerNext = ".next"
	ContainerPrev = ".prev"
)

// ContainerClaim is the claim of a container or a job on its container's name, for the overlap
// rule of a node (paths.Overlaps) beside the path claims: ContainerName joins two names with
// '-', which names hold too, so module a's resource b-c and module a-b's resource c would
// share a container. A name claim does not start with '/', so it meets no path, only its equal.
// ok is false for a resource of another kind.
func (r Resource) ContainerClaim(module string, id int, isNew bool) (c paths.Claim, ok bool) {
	if r.Kind != KindContainer && r.Kind != KindJob {
		return paths.Claim{}, false
	}
	return paths.Claim{Path: "the container name " + ContainerName(module, r.Name), Kind: "container name", New: isNew, ID: id}, true
}

// validateContainer checks what only a container or a job has. A field holding a template is
// held to the same rules when it is rendered; here only what a template cannot change is.
func validateContainer(r Resource, fields []string, add func(field, format string, args ...any)) {
	for _, suffix := range []string{ContainerPrev, ContainerNext} {
		if strings.HasSuffix(r.Name, suffix) {
			add("name", "may not end in %q: hostd gives that name to the container it stages or keeps aside while it replaces another", suffix)
		}
	}
	if p := imageProblem(r.Image); p != "" {
		add("image", "%s", p)
	}
	if i, p := volumesProblem(r.Volumes); p != "" {
		add(fmt.Sprintf("volumes[%d]", i), "%s", p)
	}
	switch r.Network {
	case "", NetworkHost, NetworkNone:
	default:
		add("network", "must be %q (the node's network) or %q (none), or left out for the module's own network; not %q", NetworkHost, NetworkNone, r.Network)
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
	validateContainerRuntime(r, add)
}

// Networks a container or a job may ask for instead of the default one.
const (
	NetworkHost = "host"
	NetworkNone = "none"
)

const pinnedRule = "must be pinned by digest (name@sha256:…): a tag can move, and a moved tag would turn a build into a deployment"

// The image grammar is compiled when an image is first checked, not when the package is
// loaded: every program that links the package would pay for it at start, most of them
// without ever checking an image.
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
		return "is not an image reference: [host[:port]/]name[:tag]@sha256:…, the name of lowercase letters, digits and '.', '_', '-' and '/', " +
			"the host with a dot or localhost; a ':' before the first '/' is only a registry's port (\"oci-archive:\", \"dir:\" and the like are not images in a registry)"
	}
	return ""
}

// validImageName reports whether ref is a repository name, with an optional registry host
// first and an optional tag last, as Docker and podman read one.
//
// What a container CLI reads before the first ':' may be a transport rather than a registry:
// podman reads "oci-archive:x", "dir:x", "containers-storage:x" or "sif:5000/x" as a file or a
// store of its own, whatever digest follows, and never asks a registry. So before the first
// '/' a ':' is allowed only as a registry's port, and a registry is a host no transport is
// named like: one with a dot (a domain, an IPv4 address) or localhost. A tag therefore needs a
// '/' before it ("docker.io/library/app:1.2@sha256:…"); it changes nothing beside the digest.
func validImageName(ref string) bool {
	if first, _, slash := strings.Cut(ref, "/"); strings.ContainsRune(first, ':') && (!slash || !registryHost(first)) {
		return false
	}
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
		if !registryHost(parts[0]) {
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

// registryHost reports whether s is a registry: host[:port], the host with a dot or localhost.
func registryHost(s string) bool {
	host, _, _ := strings.Cut(s, ":")
	return imageHost().MatchString(s) && (strings.ContainsRune(host, '.') || host == "localhost")
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

// MovedVolume is a container path mounted from another host path than before.
type MovedVolume struct{ Target, Was, Now string }

// MovedVolumes lists the container paths of after mounted from another host path than in
// before: a recreate moves no data, so the container finds its path empty, or another's data.
func MovedVolumes(before, after []string) []MovedVolume {
	was := map[string]string{}
	for _, v := range before {
		if host, target, _, err := ParseVolume(v); err == nil {
			was[target] = host
		}
	}
	var out []MovedVolume
	for _, v := range after {
		host, target, _, err := ParseVolume(v)
		if err != nil {
			continue
		}
		if old, ok := was[target]; ok && old != host {
			out = append(out, MovedVolume{target, old, host})
		}
	}
	return out
}
