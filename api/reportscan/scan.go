// Package reportscan reads a report in the shape hostd writes, for about half of what the
// general JSON decoder costs: reports are the controller's hot path, and most of a report's
// cost was the general decoder's work over its 500 results.
//
// The contract: Scan either reads a body exactly as the general decoder does
// (json.Unmarshal into hq.Report with unknown members refused) and says ok, or says not ok and
// the caller decodes the body with the general decoder. Anything the scanner does not fully
// understand — an unknown or repeated field, a value of an unexpected kind, a number that is
// not a plain integer, bad UTF-8, any doubt, even a panic of its own — is "not ok", so what is
// accepted and what is refused, and the errors, are exactly the general decoder's. A fuzz test
// holds the two to it. HQ_REPORT_DECODER=general makes the controller skip the scanner.
//
// ScanHeader reads all but the results and gives their bytes unread, for a caller that knows
// those bytes already: whatever it says ok to is the general decoder's report exactly when the
// results' bytes are a list of results, which the same fuzz test holds it to.
package reportscan

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"
	"unique"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/meshhq/hq"
)

// scanner reads JSON of a known shape; ok turns false at the first thing it does not handle.
type scanner struct {
	b  []byte
	i  int
	ok bool
}

// Scan reads body as a report, into results when it has room, and reports whether it could.
func Scan(body []byte, results []hq.Result) (rep hq.Report, ok bool) {
	rep, _, ok = scan(body, results, false)
	return rep, ok
}

// ScanHeader reads body as Scan does but leaves the results out: it takes their array to end at
// the body's last ']' (resultsTail) and returns its bytes without reading them. ok says
// everything else was read as Scan reads it. Whether those bytes are a valid list of results,
// and so whether the body is a report at all, it does not say: that is known only of bytes
// that Scan, or the general decoder, read whole before. When they are, the report is the one
// the general decoder reads, with those results. Not ok says nothing: Scan may read the body.
func ScanHeader(body []byte) (rep hq.Report, results []byte, ok bool) {
	return scan(body, nil, true)
}

func scan(body []byte, results []hq.Result, skip bool) (rep hq.Report, raw []byte, ok bool) {
	defer func() {
		if recover() != nil {
			rep, raw, ok = hq.Report{}, nil, false // a bug of the scanner's is the general decoder's to answer
		}
	}()
	s := &scanner{b: body, ok: true}
	s.object(func(name []byte) int {
		switch string(name) {
		case "send_id":
			rep.SendID = s.int()
			return 0
		case "generation":
			rep.Generation = s.int()
			return 1
		case "digest":
			rep.Digest = s.str()
			return 2
		case "signature":
			rep.Signature = s.str()
			return 3
		case "started_at":
			rep.StartedAt = s.time()
			return 4
		case "finished_at":
			rep.FinishedAt = s.time()
			return 5
		case "refused":
			rep.Refused = s.refusal()
			return 6
		case "results":
			if skip {
				raw = s.resultsTail()
			} else {
				rep.Results = s.results(results)
			}
			return 7
		}
		return -1
	})
	s.space()
	return rep, raw, s.ok && s.i == len(s.b)
}

// resultsTail takes the results to be the array from here to the body's last ']', and returns
// its bytes. In a report the general decoder reads, that is the results array whenever the
// rest of the body then reads as the end of the report: the results are the only member whose
// value holds an array, so no ']' after theirs stands outside a string, and reading on from a
// ']' inside a string meets that string's escaped quotes or its closing quote where a member
// or the object's end must come. So the array's end is found without reading what it holds.
func (s *scanner) resultsTail() []byte {
	if !s.ok || s.next() != '[' {
		s.ok = false
		return nil
	}
	end := bytes.LastIndexByte(s.b, ']')
	if end < s.i {
		s.ok = false
		return nil
	}
	raw := s.b[s.i : end+1]
	s.i = end + 1
	return raw
}

func (s *scanner) space() {
	// Every byte that may be space is at most ' ': one comparison passes the rest, which is
	// what follows almost every token of a compact body.
	for s.i < len(s.b) && s.b[s.i] <= ' ' {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips space and says what comes next, 0 at the end.
func (s *scanner) next() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) expect(c byte) {
	if s.ok && s.next() == c {
		s.i++
		return
	}
	s.ok = false
}

// object reads an object; field reads the value of a member and returns the member's number
// (a bit of a mask, so a repeated member is caught), or -1 for one it does not know.
func (s *scanner) object(field func(name []byte) int) {
	s.expect('{')
	if s.ok && s.next() == '}' {
		s.i++
		return
	}
	var seen uint64
	for s.ok {
		name := s.raw()
		s.expect(':')
		if !s.ok {
			return
		}
		n := field(name)
		if n < 0 || seen&(1<<n) != 0 {
			s.ok = false
			return
		}
		seen |= 1 << n
		switch s.next() {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.ok = false
		}
	}
}

// raw reads a string without escapes and returns its bytes, unquoted, in one pass; a string
// with escapes, control characters or bad UTF-8 is not raw.
func (s *scanner) raw() []byte {
	if !s.ok || s.next() != '"' {
		s.ok = false
		return nil
	}
	b := s.b
	start, wide := s.i+1, false
	for j := start; j < len(b); j++ {
		// Most bytes of a report are plain: one table lookup passes them.
		for j < len(b) && plain[b[j]] {
			j++
		}
		if j == len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			v := b[start:j]
			if wide && !utf8.Valid(v) {
				s.ok = false
				return nil
			}
			s.i = j + 1
			return v
		case c == '\\' || c < 0x20:
			s.ok = false
			return nil
		default: // c >= 0x80
			wide = true
		}
	}
	s.ok = false
	return nil
}

// plain holds the bytes a raw string passes without a second look: not a quote, a backslash, a
// control character or the start of a multi-byte character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// interned reads a string that repeats across results (a module name, an outcome) without
// allocating it again for every result. A field takes a few values in a report, so a short
// list compared in order finds them faster than a map's hash would.
func (s *scanner) interned(seen *[]string) string {
	at := s.i
	v := s.raw()
	if !s.ok {
		s.ok, s.i = true, at
		return s.str()
	}
	for _, x := range *seen {
		if x == string(v) {
			return x
		}
	}
	x := string(v)
	if len(*seen) < 16 {
		*seen = append(*seen, x)
	}
	return x
}

// str reads a string value, unescaping it as JSON says when it has escapes.
func (s *scanner) str() string {
	if !s.ok || s.next() != '"' {
		s.ok = false
		return ""
	}
	at := s.i
	if v := s.raw(); s.ok {
		return string(v)
	}
	// Escapes: find the closing quote, and let jsontext unquote (and validate) the literal.
	s.ok, s.i = true, at
	j := at + 1
	for ; j < len(s.b) && s.b[j] != '"'; j++ {
		if s.b[j] == '\\' {
			j++
		}
	}
	if j >= len(s.b) {
		s.ok = false
		return ""
	}
	u, err := jsontext.AppendUnquote(nil, s.b[at:j+1])
	if err != nil || !utf8.Valid(u) {
		s.ok = false
		return ""
	}
	s.i = j + 1
	return string(u)
}

func (s *scanner) literal(word string) bool {
	if s.ok && bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		s.i += len(word)
		return true
	}
	return false
}

func (s *scanner) boolean() bool {
	if !s.ok {
		return false
	}
	switch s.next() {
	case 't':
		if s.literal("true") {
			return true
		}
	case 'f':
		if s.literal("false") {
			return false
		}
	}
	s.ok = false
	return false
}

// int reads a plain integer: an optional minus and digits, no leading zero, no fraction or
// exponent (the general decoder decides about those).
func (s *scanner) int() int64 {
	if !s.ok {
		return 0
	}
	s.space()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == digits || s.b[digits] == '0' && s.i-digits > 1 {
		s.ok = false
		return 0
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.ok = false
		return 0
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	if err != nil {
		s.ok = false
	}
	return n
}

// time reads a time as the general decoder would, which is cheap for one value.
func (s *scanner) time() time.Time {
	if !s.ok || s.next() != '"' {
		s.ok = false
		return time.Time{}
	}
	at := s.i
	s.raw()
	var t time.Time
	if !s.ok || json.Unmarshal(s.b[at:s.i], &t) != nil {
		s.ok = false
	}
	return t
}

func (s *scanner) refusal() *hq.Refusal {
	if s.ok && s.next() == 'n' {
		if !s.literal("null") {
			s.ok = false
		}
		return nil
	}
	f := &hq.Refusal{}
	s.object(func(name []byte) int {
		switch string(name) {
		case "generation":
			f.Generation = s.int()
			return 0
		case "digest":
			f.Digest = s.str()
			return 1
		case "send_id":
			f.SendID = s.int()
			return 2
		case "composed_by":
			f.ComposedBy = s.str()
			return 3
		case "composed_at":
			f.ComposedAt = s.time()
			return 4
		case "reason":
			f.Reason = s.str()
			return 5
		}
		return -1
	})
	return f
}

func (s *scanner) results(out []hq.Result) []hq.Result {
	s.expect('[')
	if out = out[:0]; cap(out) == 0 {
		out = make([]hq.Result, 0, 512)
	}
	var seen interns
	if s.ok && s.next() == ']' {
		s.i++
		return out
	}
	for s.ok {
		out = append(out, s.result(&seen))
		switch s.next() {
		case ',':
			s.i++
		case ']':
			s.i++
			return out
		default:
			s.ok = false
		}
	}
	return out
}

// interns are the values seen in one report of the fields that repeat across its results.
type interns struct {
	modules, outcomes []string
}

// name reads a resource name as its one canonical copy. A fleet's reports name the same
// resources again and again, and a name read before is not allocated again: that was 500
// strings a report, a third of what one allocated. unique holds its values weakly, so names
// nothing refers to any more are let go, and hosts sending names of their own invention cannot
// make the controller hold them.
func (s *scanner) name() string {
	at := s.i
	v := s.raw()
	if !s.ok {
		s.ok, s.i = true, at
		return s.str()
	}
	return unique.Make(string(v)).Value()
}

func (s *scanner) result(seen *interns) hq.Result {
	var r hq.Result
	s.object(func(name []byte) int {
		switch string(name) {
		case "module":
			r.Module = s.interned(&seen.modules)
			return 0
		case "resource":
			r.Resource = s.name()
			return 1
		case "outcome":
			r.Outcome = hq.State(s.interned(&seen.outcomes))
			return 2
		case "attempted":
			r.Attempted = s.boolean()
			return 3
		case "changed":
			r.Changed = s.boolean()
			return 4
		case "error":
			r.Error = s.str()
			return 5
		case "hold_reason":
			r.HoldReason = s.str()
			return 6
		case "blocked_by":
			r.BlockedBy = s.str()
			return 7
		case "drift":
			r.Drift = s.boolean()
			return 8
		case "drift_detail":
			r.DriftDetail = s.str()
			return 9
		case "duration_ms":
			r.DurationMS = s.int()
			return 10
		case "note":
			r.Note = s.str()
			return 11
		case "container":
			r.Container = s.container()
			return 12
		case "drift_found":
			r.DriftFound = s.str()
			return 13
		case "held_found":
			r.HeldFound = s.found()
			return 14
		}
		return -1
	})
	return r
}

// found reads what hostd found in a held file, or null.
func (s *scanner) found() *hq.FoundFile {
	if s.ok && s.next() == 'n' {
		if !s.literal("null") {
			s.ok = false
		}
		return nil
	}
	f := &hq.FoundFile{}
	s.object(func(name []byte) int {
		switch string(name) {
		case "text":
			f.Text = s.str()
			return 0
		case "omitted":
			f.Omitted = s.str()
			return 1
		}
		return -1
	})
	return f
}

// container reads a result's container status, or null.
func (s *scanner) container() *hq.ContainerStatus {
	if s.ok && s.next() == 'n' {
		if !s.literal("null") {
			s.ok = false
		}
		return nil
	}
	c := &hq.ContainerStatus{}
	s.object(func(name []byte) int {
		switch string(name) {
		case "id":
			c.ID = s.str()
			return 0
		case "image_digest":
			c.ImageDigest = s.str()
			return 1
		case "started_at":
			c.StartedAt = s.time()
			return 2
		case "restarts":
			c.Restarts = s.int()
			return 3
		case "health":
			c.Health = s.str()
			return 4
		case "spec":
			c.Spec = s.str()
			return 5
		case "earlier_spec":
			c.EarlierSpec = s.boolean()
			return 6
		}
		return -1
	})
	return c
}
