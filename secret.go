package hq

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meshhq/hq/tmpl"
)

// MaxSecret bounds a secret's value.
const MaxSecret = 64 << 10

// MaxSecretNameLen bounds a secret's name.
const MaxSecretNameLen = 128

// ValidSecretName reports whether s may name a secret: segments of lowercase letters, digits
// and '_', each starting with a letter, joined by '/' ("app/db", "tls/api_key"). A template
// names it with each '/' as '_' (SecretKey), so the grammar keeps to what a template field may be.
func ValidSecretName(s string) bool {
	if s == "" || len(s) > MaxSecretNameLen {
		return false
	}
	for seg := range strings.SplitSeq(s, "/") {
		if seg == "" || seg[0] < 'a' || seg[0] > 'z' {
			return false
		}
		for _, c := range seg {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				return false
			}
		}
	}
	return true
}

// SecretNameError is the *Error for a bad secret name.
func SecretNameError(name string) *Error {
	e := Errorf(CodeInvalid, "invalid secret name %q: segments of lowercase letters, digits and '_', each starting with a letter, joined by '/', at most %d", clip(name, 200), MaxSecretNameLen)
	e.Details = []FieldError{{Field: "name", Message: "not a valid secret name"}}
	return e
}

// SecretKey is how a template names the secret name: {{.Secrets.app_db}} for app/db. Two
// secrets with one key cannot both exist: the controller refuses the second.
func SecretKey(name string) string { return strings.ReplaceAll(name, "/", "_") }

// SecretRef names one version of a secret in a declaration's sealed values: "app/db@3".
func SecretRef(name string, version int64) string {
	return name + "@" + strconv.FormatInt(version, 10)
}

// SecretLabel is how every surface speaks of a secret's value without showing it:
// "secret app/db v3 (sha256:1a2b3c4d…)". digest is the value's sha256 digest, or a prefix of it.
func SecretLabel(name string, version int64, digest string) string {
	return fmt.Sprintf("secret %s v%d (%s…)", name, version, ShortDigest(digest))
}

// ShortDigest is a digest's algorithm and its first 8 hex digits.
func ShortDigest(d string) string {
	alg, hex, ok := strings.Cut(d, ":")
	if !ok {
		alg, hex = "sha256", d
	}
	return alg + ":" + hex[:min(8, len(hex))]
}

// SecretFile is a secret a container sees as a file: the secret Name at Target (an absolute
// path in the container), with Mode (octal, default 0400).
type SecretFile struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	Mode   string `json:"mode,omitempty"`
}

// SecretView is a secret as every surface shows it: never its value.
type SecretView struct {
	Name    string `json:"name"`
	Version int64  `json:"version"`
	// Digest is the newest value's sha256, its first 8 hex digits: enough to tell two values
	// apart, far too little to learn one.
	Digest    string    `json:"digest"`
	UpdatedAt time.Time `json:"updated_at"`
	// Modules are the modules whose newest revision uses the secret, and Nodes how many
	// nodes are pinned to a revision that does.
	Modules  []string            `json:"modules"`
	Nodes    int64               `json:"nodes"`
	Versions []SecretVersionView `json:"versions,omitempty"`
}

// SecretVersionView is one version of a secret, without its value.
type SecretVersionView struct {
	Version   int64     `json:"version"`
	Digest    string    `json:"digest"`
	CreatedAt time.Time `json:"created_at"`
}

// Label is the view's newest version as SecretLabel says it.
func (v SecretView) Label() string { return SecretLabel(v.Name, v.Version, v.Digest) }

// SecretKeys are the template keys r's content puts in ({{.Secrets.k}}), sorted, once each.
func (r Resource) SecretKeys() []string {
	if !tmpl.Is(r.Content) {
		return nil
	}
	keys, _ := tmpl.SecretKeys(r.Content)
	return keys
}

// SecretNamesNamed are the secrets r names outright, in secret_env and secrets, sorted, once
// each; its templates name theirs by key (SecretKeys).
func (r Resource) SecretNamesNamed() []string {
	var names []string
	for _, n := range r.SecretEnv {
		names = append(names, n)
	}
	for _, f := range r.Secrets {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// UsesSecrets reports whether r puts a secret anywhere.
func (r Resource) UsesSecrets() bool {
	return len(r.SecretPins) > 0 || len(r.SecretEnv) > 0 || len(r.Secrets) > 0 || len(r.SecretKeys()) > 0
}

// PinnedSecrets are the secrets r's revision pins, as name@version refs, sorted.
func (r Resource) PinnedSecrets() []string {
	refs := make([]string, 0, len(r.SecretPins))
	for _, n := range slices.Sorted(maps.Keys(r.SecretPins)) {
		refs = append(refs, SecretRef(n, r.SecretPins[n]))
	}
	return refs
}

// validateSecrets checks how r uses secrets: secret_env on a container or a service, secrets
// on a container, a template's secrets in a file's content alone. A value put on a command
// line, in a path or in a plain env var is shown by ps, podman inspect and the pages; those
// fields never take one.
func validateSecrets(r Resource, add func(field, format string, args ...any)) {
	if len(r.SecretEnv) > 0 && r.Kind != KindContainer && r.Kind != KindService {
		add("secret_env", "not a field of a %s: only a container or a service takes secret_env", r.Kind)
	}
	if len(r.Secrets) > 0 && r.Kind != KindContainer {
		add("secrets", "not a field of a %s: only a container mounts secrets", r.Kind)
	}
	for _, k := range slices.Sorted(maps.Keys(r.SecretEnv)) {
		switch n := r.SecretEnv[k]; {
		case !validEnvName(k):
			add("secret_env", "%q is not a variable name", k)
		case r.Env[k] != "":
			add("secret_env."+k, "is in env as well: a variable has one value")
		case !ValidSecretName(n):
			add("secret_env."+k, "%q is not a secret name", clip(n, 200))
		}
	}
	targets := map[string]int{}
	for i, f := range r.Secrets {
		field := fmt.Sprintf("secrets[%d]", i)
		switch j, dup := targets[f.Target]; {
		case !ValidSecretName(f.Name):
			add(field+".name", "%q is not a secret name", clip(f.Name, 200))
		case !strings.HasPrefix(f.Target, "/") || path.Clean(f.Target) != f.Target || f.Target == "/" || strings.ContainsAny(f.Target, ",:=\x00\n"):
			add(field+".target", "must be a clean absolute path in the container, without ',', ':' or '='")
		case dup:
			add(field+".target", "is the target of secrets[%d] too", j)
		case f.Mode != "" && !validMode(f.Mode):
			add(field+".mode", "must be octal, like \"0400\"")
		}
		targets[f.Target] = i
	}
	c := r.clone()
	c.templated(func(field string, s *string) {
		if field == "content" || !tmpl.Is(*s) {
			return
		}
		if keys, err := tmpl.SecretKeys(*s); err == nil && len(keys) > 0 {
			add(field, "a secret may be put only in a file's content ({{.Secrets.%s}}); give a container or a service secret_env or secrets", keys[0])
		}
	})
	if len(r.SecretKeys()) > 0 && r.Kind != KindFile {
		add("content", "a secret may be put only in a file's content")
	}
}
