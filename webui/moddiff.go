package webui

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db"
)

// resourceChange is one resource that differs between two revisions.
type resourceChange struct {
	Name   string
	Kind   string
	Change badge
	// Fields are the spec's fields that differ, content aside.
	Fields []fieldChange
	// Content is the difference in a file's content, when it differs.
	Content *contentChange
}

type fieldChange struct {
	Name     string
	From, To string
}

// contentChange is a file's content before and after: a unified diff, or why there is none.
type contentChange struct {
	From, To string
	Diff     textDiff
	Note     string
}

// Text is the diff as diff -u would print it, for copying.
func (c contentChange) Text() string { return c.Diff.String(c.From, c.To) }

// A diff page lists at most maxChanges resources, and shows at most maxFieldText bytes of
// each field's value: the page of a revision that rewrote a large module stays small.
const (
	maxChanges   = 500
	maxFieldText = 1 << 10
)

// clipField is a field's value as a page shows it: cut past maxFieldText, saying so.
func clipField(v string) string {
	if len(v) <= maxFieldText {
		return v
	}
	cut := maxFieldText
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes, the first %d shown)", v[:cut], len(v), cut)
}

// diffRevisions compares two revisions resource by resource, by name: those of the newer in
// its order, then those it removed. It returns the resources that differ and a line that
// counts them.
func diffRevisions(a, b db.Revision) ([]resourceChange, string) {
	old := make(map[string]hq.Resource, len(a.Resources))
	for _, r := range a.Resources {
		old[r.Name] = r
	}
	var out []resourceChange
	var added, removed, changed, same int
	budget := newDiffBudget(maxDiffText)
	// Past maxChanges the resources that differ are counted, not compared.
	compare := func(before, after *hq.Resource) {
		if len(out) < maxChanges {
			out = append(out, compareResource(a.Revision, b.Revision, before, after, budget))
		}
	}
	seen := map[string]bool{}
	for _, r := range b.Resources {
		seen[r.Name] = true
		o, had := old[r.Name]
		switch {
		case !had:
			added++
			compare(nil, &r)
		case o.Digest() != r.Digest():
			changed++
			compare(&o, &r)
		default:
			same++
		}
	}
	for _, r := range a.Resources {
		if !seen[r.Name] {
			removed++
			compare(&r, nil)
		}
	}
	summary := fmt.Sprintf("r%d→r%d: %d added, %d removed, %d changed, %d unchanged", a.Revision, b.Revision, added, removed, changed, same)
	if n := added + removed + changed; n > len(out) {
		summary += fmt.Sprintf("; the first %d are shown, %d not", len(out), n-len(out))
	}
	return out, summary
}

// compareResource says how a resource differs: before is nil for one added, after for one
// removed. budget is what the page may still show of content diffs.
func compareResource(fromRev, toRev int64, before, after *hq.Resource, budget *diffBudget) resourceChange {
	var c resourceChange
	var bf, af map[string]string
	switch {
	case before == nil:
		c.Name, c.Kind, c.Change = after.Name, after.Kind, badge{"added", toneGood}
		af = specMap(*after)
	case after == nil:
		c.Name, c.Kind, c.Change = before.Name, before.Kind, badge{"removed", toneBad}
		bf = specMap(*before)
	default:
		c.Name, c.Kind, c.Change = after.Name, after.Kind, badge{"changed", toneWarn}
		bf, af = specMap(*before), specMap(*after)
	}
	keys := slices.Sorted(maps.Keys(bf))
	for _, k := range slices.Sorted(maps.Keys(af)) {
		if _, ok := bf[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if bf[k] != af[k] {
			c.Fields = append(c.Fields, fieldChange{Name: k, From: clipField(bf[k]), To: clipField(af[k])})
		}
	}
	c.Content = contentOf(fromRev, toRev, c.Name, before, after, budget)
	return c
}

// contentOf compares a file's content; nil when neither side is a file or it did not change.
func contentOf(fromRev, toRev int64, name string, before, after *hq.Resource, budget *diffBudget) *contentChange {
	isFile := func(r *hq.Resource) bool { return r != nil && r.Kind == hq.KindFile }
	if !isFile(before) && !isFile(after) {
		return nil
	}
	var ta, tb, ba, bb string
	if isFile(before) {
		ta, ba = before.Content, before.ContentBase64
	}
	if isFile(after) {
		tb, bb = after.Content, after.ContentBase64
	}
	if ta == tb && ba == bb {
		return nil
	}
	c := &contentChange{From: fmt.Sprintf("r%d/%s", fromRev, name), To: fmt.Sprintf("r%d/%s", toRev, name)}
	switch {
	case ba != "" || bb != "":
		c.Note = fmt.Sprintf("binary content (content_base64, %d bytes before, %d after): not compared line by line", len(ba), len(bb))
	case !utf8.ValidString(ta) || !utf8.ValidString(tb):
		c.Note = "content that is not UTF-8 text: not compared line by line"
	default:
		c.Diff = budget.diff(ta, tb)
		c.Note = c.Diff.Skipped
	}
	return c
}

// specMap is a resource's spec as field → value, with the API's field names; the name and
// kind head the resource already, and a file's content is compared on its own.
func specMap(r hq.Resource) map[string]string {
	raw, err := json.Marshal(r)
	if err != nil {
		return map[string]string{}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return map[string]string{}
	}
	out := make(map[string]string, len(fields))
	for k, v := range fields {
		switch k {
		case "name", "kind", "content", "content_base64":
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else {
			out[k] = string(v)
		}
	}
	return out
}

// specFields is specMap in the order of its field names.
func specFields(r hq.Resource) []fact {
	m := specMap(r)
	out := make([]fact, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fact{Name: k, Value: clipField(m[k])})
	}
	return out
}

// fileText is a file's content as the revision page shows it, or why it does not.
func fileText(r hq.Resource) (text, note string) {
	switch {
	case r.Kind != hq.KindFile:
		return "", ""
	case r.ContentBase64 != "":
		return "", fmt.Sprintf("binary content (content_base64, %d bytes): not shown", len(r.ContentBase64))
	case len(r.Content) > maxDiffText:
		return "", fmt.Sprintf("%d bytes of content, above %d KiB: not shown", len(r.Content), maxDiffText>>10)
	case !utf8.ValidString(r.Content):
		return "", "content that is not UTF-8 text: not shown"
	case r.Content == "":
		return "", "empty"
	}
	return r.Content, ""
}
