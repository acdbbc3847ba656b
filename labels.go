package hq

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// Labels are a node's key=value properties, which selectors address it by.
type Labels map[string]string

// Label and var limits: the Kubernetes label rules for keys and label values; a var's value
// is any text up to MaxVarValueLen bytes.
const (
	MaxLabelLen    = 63
	MaxLabelPrefix = 253
	MaxVarValueLen = 1024
	// MaxLabels bounds the labels (and the vars) of one node.
	MaxLabels = 64
)

// labelWord reports whether s is a label word: at most 63 characters of letters, digits,
// '-', '_' and '.', starting and ending with a letter or digit.
func labelWord(s string) bool {
	if s == "" || len(s) > MaxLabelLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(s)-1 || c != '-' && c != '_' && c != '.') {
			return false
		}
	}
	return true
}

// dnsPrefix reports whether s is a DNS subdomain, the optional prefix of a label key.
func dnsPrefix(s string) bool {
	if s == "" || len(s) > MaxLabelPrefix {
		return false
	}
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || len(part) > 63 {
			return false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
			if !alnum && (c != '-' || i == 0 || i == len(part)-1) {
				return false
			}
		}
	}
	return true
}

// ValidLabelKey reports whether k is a label key: a label word, optionally after a DNS
// prefix and a slash (example.com/role).
func ValidLabelKey(k string) bool {
	if prefix, name, ok := strings.Cut(k, "/"); ok {
		return dnsPrefix(prefix) && labelWord(name)
	}
	return labelWord(k)
}

// ValidLabelValue reports whether v is a label value: empty, or a label word.
func ValidLabelValue(v string) bool { return v == "" || labelWord(v) }

// ValidateLabels returns nil or an invalid *Error naming every bad label.
func ValidateLabels(labels map[string]string) error {
	return validatePairs("labels", labels, ValidLabelValue, "a label value is empty or at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
}

// ValidateVars returns nil or an invalid *Error naming every bad var: keys as label keys,
// values any UTF-8 text up to 1 KiB.
func ValidateVars(vars map[string]string) error {
	return validatePairs("vars", vars, func(v string) bool { return len(v) <= MaxVarValueLen && utf8.ValidString(v) },
		fmt.Sprintf("a var value is UTF-8 text of at most %d bytes", MaxVarValueLen))
}

func validatePairs(what string, m map[string]string, validValue func(string) bool, valueRule string) error {
	var errs []FieldError
	if len(m) > MaxLabels {
		errs = append(errs, FieldError{Field: what, Message: fmt.Sprintf("%d %s, at most %d", len(m), what, MaxLabels)})
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch {
		case !ValidLabelKey(k):
			errs = append(errs, FieldError{Field: what + "." + k, Message: fmt.Sprintf("key %q: a key is at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, optionally after a DNS prefix and '/'", k)})
		case !validValue(m[k]):
			errs = append(errs, FieldError{Field: what + "." + k, Message: fmt.Sprintf("value %q of %s: %s", m[k], k, valueRule)})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	e := Errorf(CodeInvalid, "invalid %s: %s", what, errs[0].Message)
	e.Details = errs
	return e
}
