package hq

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/meshhq/hq/paths"
)

// Kinds of resource.
const (
	KindFile      = "file"
	KindDirectory = "directory"
	KindSymlink   = "symlink"
	KindAbsent    = "absent"
	KindAction    = "action"
	KindService   = "service"
	KindPackage   = "package"
	// KindContainer keeps a container running; KindJob runs one to completion once per spec.
	KindContainer = "container"
	KindJob       = "job"
)

// Package states: what a package resource asks for. The empty state is PackagePresent.
const (
	PackagePresent = "present"
	PackageAbsent  = "absent"
)

// Kinds lists every kind a module may declare.
var Kinds = []string{KindFile, KindDirectory, KindSymlink, KindAbsent, KindAction, KindService, KindPackage, KindContainer, KindJob}

// Resource is one thing on a node, as a module declares it. Fields that do not belong to the
// kind are rejected by Validate, so a spec means exactly what it says.
type Resource struct {
	Name          string            `json:"name"`
	Kind          string            `json:"kind"`
	Path          string            `json:"path,omitempty"`
	Content       string            `json:"content,omitempty"`
	ContentBase64 string            `json:"content_base64,omitempty"`
	Mode          string            `json:"mode,omitempty"`
	Validate      []string          `json:"validate,omitempty"`
	Target        string            `json:"target,omitempty"`
	Command       []string          `json:"command,omitempty"`
	Env           map[string]string `json:"env,omitempty"`
	RestartOn     []string          `json:"restart_on,omitempty"`
	Health        *Health           `json:"health,omitempty"`
	Gate          *bool             `json:"gate,omitempty"`
	Group         string            `json:"group,omitempty"`
	// Package, Version, State and Source belong to a package: its Debian name, the version
	// wanted (empty: any installed version, or the candidate when none is), present (the
	// default) or absent, and a .deb file under the root to install instead of a repository's.
	// Scripts allows what is installed for it to bring maintainer scripts, which dpkg runs as
	// root; without it such a package is refused.
	Package string `json:"package,omitempty"`
	Version string `json:"version,omitempty"`
	State   string `json:"state,omitempty"`
	Source  string `json:"source,omitempty"`
	Scripts bool   `json:"scripts,omitempty"`
	// Image, Volumes, Ports, Network and User belong to a container or a job: its image pinned
	// by digest (name@sha256:…), host paths under the root mounted at paths in the container
	// ("/srv/app/data:/data", with ":ro" read-only), ports published as "127.0.0.1:8080:80",
	// "host" to share the node's network instead, and the user it runs as.
	Image   string   `json:"image,omitempty"`
	Volumes []string `json:"volumes,omitempty"`
	Ports   []string `json:"ports,omitempty"`
	Network string   `json:"network,omitempty"`
	User    string   `json:"user,omitempty"`
	// Cpus, Memory and LogMaxSize bound a container or a job: CPUs as a decimal number
	// ("0.5"), memory and the size its log file reaches before it is rotated as a size ("256m",
	// "10m"). Restart is a container's restart policy, carried out by the container engine
	// without hostd: "no" (the default), "on-failure" or "always".
	Cpus       string `json:"cpus,omitempty"`
	Memory     string `json:"memory,omitempty"`
	LogMaxSize string `json:"log_max_size,omitempty"`
	Restart    string `json:"restart,omitempty"`
	// SecretEnv, on a container or a service, puts secrets in variables: variable → secret
	// name. Secrets, on a container, mounts secrets as files. A file's content names secrets
	// in templates ({{.Secrets.app_db}}). None of them holds a value.
	SecretEnv map[string]string `json:"secret_env,omitempty"`
	Secrets   []SecretFile      `json:"secrets,omitempty"`
	// SecretPins is the version of each secret the resource uses (name → version), which
	// the controller pins when a revision is made; a new version is a new revision, and
	// rolls out as one. What an upload says here is replaced.
	SecretPins map[string]int64 `json:"secret_pins,omitempty"`
}

// Health is how hostd checks that a service or a container is serving.
type Health struct {
	// HTTP is a URL that must answer 2xx.
	HTTP string `json:"http"`
	// Command, for a container, is run in it and must exit 0; instead of HTTP.
	Command []string `json:"command,omitempty"`
}

// IsGate reports whether what follows r in its module waits for r to apply.
// Actions and jobs gate unless they say otherwise; other kinds only when they ask to. A
// container, like a service, is something that runs rather than a step others build on: a
// gate by default would hold every later resource of its module on one bad image.
func (r Resource) IsGate() bool {
	if r.Gate != nil {
		return *r.Gate
	}
	return r.Kind == KindAction || r.Kind == KindJob
}

// Digest identifies the spec: two resources with the same digest declare the same state.
func (r Resource) Digest() string {
	b, err := json.Marshal(r)
	if err != nil {
		panic("hq: resource does not marshal: " + err.Error()) // plain strings and maps always do
	}
	return digest(b)
}

// PathClaim is r's claim on its path for the overlap rule (paths.Overlaps), under the caller's
// handle id; only a directory may have other declared paths under it.
func (r Resource) PathClaim(id int, isNew bool) paths.Claim {
	return paths.Claim{Path: r.Path, Dir: r.Kind == KindDirectory, Kind: r.Kind, New: isNew, ID: id}
}

// Ref is how a resource is named across modules: module/name.
func Ref(module, name string) string { return module + "/" + name }

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DigestOf returns the sha256 digest of b, written as "sha256:<hex>".
func DigestOf(b []byte) string { return digest(b) }
