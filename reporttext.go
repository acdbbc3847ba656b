package hq

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxText bounds every free-text field a node can make the controller store (errors, reasons,
// details, digests it names): a host is trusted to say what happened, not to fill the database.
const MaxText = 2 << 10

// MaxDriftFound bounds the larger texts: a file's content as found, drifted (Result.DriftFound)
// or held (Result.HeldFound).
const MaxDriftFound = 16 << 10

// textBound is the bound of a report's text field, by the name Texts gives it.
func textBound(field string) int {
	if field == "results[].drift_found" || field == "results[].held_found.text" {
		return MaxDriftFound
	}
	return MaxText
}

// TruncateText cuts s to at most MaxText bytes, on a rune boundary, and says how much it cut.
func TruncateText(s string) string { return truncateTo(s, MaxText) }

func truncateTo(s string, bound int) string {
	if len(s) <= bound {
		return s
	}
	marker := fmt.Sprintf(" … [%d bytes truncated]", len(s))
	cut := bound - len(marker)
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … [%d bytes truncated]", len(s)-cut)
}

// CleanText is s as the controller stores a text a node sent: valid UTF-8 without NUL (each
// bad byte and each NUL becomes U+FFFD, so what sqlite3 shows is what the API answers), at
// most MaxText bytes.
func CleanText(s string) string { return cleanTextTo(s, MaxText) }

func cleanTextTo(s string, bound int) string {
	if !plainText(s) {
		s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	}
	return truncateTo(s, bound)
}

// plainText reports whether s is valid UTF-8 without NUL: nearly every text, checked in one pass.
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 {
			return false
		} else if c >= utf8.RuneSelf {
			return utf8.ValidString(s[i:]) && strings.IndexByte(s[i:], 0) < 0
		}
	}
	return true
}

// Texts reaches every text of a report that the controller may store, by the name the API
// gives it: the one list that BoundText cleans and docs/security.md's table names.
func (r *Report) Texts(each func(field string, s *string)) {
	each("digest", &r.Digest)
	each("signature", &r.Signature)
	for i := range r.Results {
		res := &r.Results[i]
		each("results[].error", &res.Error)
		each("results[].hold_reason", &res.HoldReason)
		each("results[].blocked_by", &res.BlockedBy)
		each("results[].drift_detail", &res.DriftDetail)
		each("results[].drift_found", &res.DriftFound)
		each("results[].note", &res.Note)
		if f := res.HeldFound; f != nil {
			each("results[].held_found.text", &f.Text)
		}
		if c := res.Container; c != nil {
			each("results[].container.id", &c.ID)
			each("results[].container.image_digest", &c.ImageDigest)
			each("results[].container.spec", &c.Spec)
		}
	}
	if f := r.Refused; f != nil {
		each("refused.digest", &f.Digest)
		each("refused.composed_by", &f.ComposedBy)
		each("refused.reason", &f.Reason)
	}
	if f := r.Transport; f != nil {
		each("transport.reason", &f.Reason)
	}
	if f := r.Host; f != nil {
		each("host.hostd_version", &f.HostdVersion)
		each("host.os", &f.OS)
		each("host.arch", &f.Arch)
	}
}

// BoundText cleans every text of the report in place (CleanText, with the field's bound).
func (r *Report) BoundText() {
	r.Texts(func(field string, s *string) {
		if *s != "" {
			*s = cleanTextTo(*s, textBound(field))
		}
	})
}
