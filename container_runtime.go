package hq

import (
	"strconv"
	"strings"
)

// Restart policies a container may ask the container engine for.
const (
	RestartNo        = "no"
	RestartOnFailure = "on-failure"
	RestartAlways    = "always"
)

// minMemory is the least memory a container may be given: podman and Docker refuse less.
const minMemory = 6 << 20

// validateContainerRuntime checks the bounds and the restart policy of a container or a job,
// and its env, which reaches the engine through an env file: one variable a line, taken as
// written.
func validateContainerRuntime(r Resource, add func(field, format string, args ...any)) {
	if r.Cpus != "" && !validCpus(r.Cpus) {
		add("cpus", "must be a number of CPUs from 0.01, with at most 3 decimals, like \"0.5\" or \"2\"; not %q", clip(r.Cpus, 40))
	}
	if r.Memory != "" {
		if n, ok := ParseSize(r.Memory); !ok || n < minMemory {
			add("memory", "must be a size of at least 6m (a number with an optional unit b, k, m or g, like \"256m\"); not %q", clip(r.Memory, 40))
		}
	}
	if r.LogMaxSize != "" {
		if n, ok := ParseSize(r.LogMaxSize); !ok || n == 0 {
			add("log_max_size", "must be a size above 0 (a number with an optional unit b, k, m or g, like \"10m\"); not %q", clip(r.LogMaxSize, 40))
		}
	}
	switch r.Restart {
	case "", RestartNo, RestartOnFailure, RestartAlways:
	default:
		add("restart", "must be %q (the default), %q or %q; not %q", RestartNo, RestartOnFailure, RestartAlways, clip(r.Restart, 40))
	}
	for k, v := range r.Env {
		if strings.ContainsAny(k, "=\x00") || k == "" {
			continue // refused for every kind
		}
		if !validEnvName(k) {
			add("env", "%q is not a variable name for a container: letters, digits, '_', '.' and '-', not starting with a digit, '.' or '-'", clip(k, 60))
		} else if p := EnvValueProblem(v); p != "" {
			add("env."+k, "%s", p)
		}
	}
}

// EnvValueProblem says why v cannot be a container's env value, or "": the env file that
// carries it holds one variable a line.
func EnvValueProblem(v string) string {
	if strings.ContainsAny(v, "\n\r\x00") {
		return "a container's env value cannot hold a line break or a NUL: it is passed in an env file, a variable a line"
	}
	return ""
}

// validEnvName reports whether k can name a variable in an env file: no space (the file's
// reader refuses it), no '=', no leading '#' (a comment) and no trailing '*' (which would
// import the variables of hostd's own environment).
func validEnvName(k string) bool {
	if k == "" || len(k) > 256 {
		return false
	}
	for i, c := range k {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '.' || c == '-')) {
			return false
		}
	}
	return true
}

func validCpus(s string) bool {
	whole, frac, dotted := strings.Cut(s, ".")
	if whole == "" || len(whole) > 4 || strings.Trim(whole, "0123456789") != "" ||
		dotted && (frac == "" || len(frac) > 3 || strings.Trim(frac, "0123456789") != "") {
		return false
	}
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f >= 0.01
}

// ParseSize reads a size as a container's memory and log bound are written: digits and an
// optional unit, b, k, m or g (either case), powers of 1024. It reports false for anything else.
func ParseSize(s string) (int64, bool) {
	num, mult := s, int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'b', 'B':
			num = s[:n-1]
		case 'k', 'K':
			num, mult = s[:n-1], 1<<10
		case 'm', 'M':
			num, mult = s[:n-1], 1<<20
		case 'g', 'G':
			num, mult = s[:n-1], 1<<30
		}
	}
	if num == "" || len(num) > 12 || strings.Trim(num, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, false
	}
	return v * mult, true
}
