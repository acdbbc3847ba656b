// Package selector parses and matches label selectors in the Kubernetes syntax. A selector that
// does not parse is an invalid *hq.Error naming the bad term, so a caller can answer it as is.
package selector

import (
	"fmt"
	"slices"
	"strings"

	"github.com/meshhq/hq"
)

// Op is how a selector term tests a label.
type Op string

const (
	OpEquals    Op = "="
	OpNotEquals Op = "!="
	OpIn        Op = "in"
	OpNotIn     Op = "notin"
	OpExists    Op = "exists"
	OpNotExists Op = "!"
)

// Term is one requirement of a selector.
type Term struct {
	Key    string
	Op     Op
	Values []string
}

// Selector is a parsed label selector: every term must hold; no terms match every node.
type Selector struct {
	Terms []Term
}

// Matches reports whether labels satisfy every term. As in Kubernetes, != and notin hold for
// a node without the key.
func (s Selector) Matches(labels map[string]string) bool {
	for _, t := range s.Terms {
		v, ok := labels[t.Key]
		var hold bool
		switch t.Op {
		case OpEquals:
			hold = ok && v == t.Values[0]
		case OpNotEquals:
			hold = !ok || v != t.Values[0]
		case OpIn:
			hold = ok && slices.Contains(t.Values, v)
		case OpNotIn:
			hold = !ok || !slices.Contains(t.Values, v)
		case OpExists:
			hold = ok
		case OpNotExists:
			hold = !ok
		}
		if !hold {
			return false
		}
	}
	return true
}

// String is the selector in its canonical form, which parses back to the same selector.
func (s Selector) String() string {
	parts := make([]string, len(s.Terms))
	for i, t := range s.Terms {
		switch t.Op {
		case OpExists:
			parts[i] = t.Key
		case OpNotExists:
			parts[i] = "!" + t.Key
		case OpIn, OpNotIn:
			parts[i] = fmt.Sprintf("%s %s (%s)", t.Key, t.Op, strings.Join(t.Values, ","))
		default:
			parts[i] = t.Key + string(t.Op) + t.Values[0]
		}
	}
	return strings.Join(parts, ",")
}

// MaxLen bounds a selector's text: a node has at most hq.MaxLabels labels, so a selector
// that needs more to say what it matches says nothing a shorter one cannot.
const MaxLen = 4096

// Parse reads the Kubernetes label-selector syntax: comma-separated terms k=v, k==v,
// k!=v, k in (a,b), k notin (a,b), k and !k. A malformed selector, or one longer than MaxLen,
// is an invalid *Error naming the term or the length.
func Parse(text string) (Selector, error) {
	if len(text) > MaxLen {
		e := hq.Errorf(hq.CodeInvalid, "selector is %d bytes, at most %d", len(text), MaxLen)
		e.Details = []hq.FieldError{{Field: "selector", Message: e.Message}}
		return Selector{}, e
	}
	return ParseStored(text)
}

// ParseStored is Parse without the bound on length, for a selector already stored: one
// written before the bound still places what it placed.
func ParseStored(text string) (Selector, error) {
	var sel Selector
	if strings.TrimSpace(text) == "" {
		return sel, nil
	}
	for _, raw := range splitTerms(text) {
		t, err := parseTerm(strings.TrimSpace(raw))
		if err != nil {
			e := hq.Errorf(hq.CodeInvalid, "invalid selector term %q: %s", strings.TrimSpace(raw), err)
			e.Details = []hq.FieldError{{Field: "selector", Message: e.Message}}
			return Selector{}, e
		}
		sel.Terms = append(sel.Terms, t)
	}
	return sel, nil
}

// splitTerms splits at the commas outside parentheses.
func splitTerms(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func parseTerm(s string) (Term, error) {
	if s == "" {
		return Term{}, fmt.Errorf("empty term")
	}
	if rest, ok := strings.CutPrefix(s, "!"); ok && !strings.ContainsAny(rest, "=!() ") {
		rest = strings.TrimSpace(rest)
		if !hq.ValidLabelKey(rest) {
			return Term{}, fmt.Errorf("%q is not a label key", rest)
		}
		return Term{Key: rest, Op: OpNotExists}, nil
	}
	for _, op := range []struct {
		text string
		op   Op
	}{{"!=", OpNotEquals}, {"==", OpEquals}, {"=", OpEquals}} {
		k, v, ok := strings.Cut(s, op.text)
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !hq.ValidLabelKey(k) {
			return Term{}, fmt.Errorf("%q is not a label key", k)
		}
		if !hq.ValidLabelValue(v) {
			return Term{}, fmt.Errorf("%q is not a label value", v)
		}
		return Term{Key: k, Op: op.op, Values: []string{v}}, nil
	}
	if i := strings.IndexAny(s, " \t("); i > 0 {
		k := s[:i]
		rest := strings.TrimSpace(s[i:])
		var op Op
		switch {
		case strings.HasPrefix(rest, "notin"):
			op, rest = OpNotIn, rest[len("notin"):]
		case strings.HasPrefix(rest, "in"):
			op, rest = OpIn, rest[len("in"):]
		default:
			return Term{}, fmt.Errorf("want =, ==, !=, in or notin after %q", k)
		}
		if !hq.ValidLabelKey(k) {
			return Term{}, fmt.Errorf("%q is not a label key", k)
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") {
			return Term{}, fmt.Errorf("%s wants a list in parentheses, like (a,b)", op)
		}
		inner := rest[1 : len(rest)-1]
		if strings.ContainsAny(inner, "()") {
			return Term{}, fmt.Errorf("parentheses do not nest")
		}
		t := Term{Key: k, Op: op}
		for v := range strings.SplitSeq(inner, ",") {
			v = strings.TrimSpace(v)
			if !hq.ValidLabelValue(v) {
				return Term{}, fmt.Errorf("%q is not a label value", v)
			}
			t.Values = append(t.Values, v)
		}
		return t, nil
	}
	if !hq.ValidLabelKey(s) {
		return Term{}, fmt.Errorf("%q is not a label key", s)
	}
	return Term{Key: s, Op: OpExists}, nil
}
