package hq

import "fmt"

// MaxText bounds every free-text field a node can make the controller store (errors, reasons,
// details): a host is trusted to say what happened, not to fill the database.
const MaxText = 2 << 10

// TruncateText cuts s to at most MaxText bytes, on a rune boundary, and says how much it cut.
func TruncateText(s string) string {
	if len(s) <= MaxText {
		return s
	}
	marker := fmt.Sprintf(" … [%d bytes truncated]", len(s))
	cut := MaxText - len(marker)
	for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … [%d bytes truncated]", len(s)-cut)
}

// BoundText truncates every free-text field of the report in place.
func (r *Report) BoundText() {
	for i := range r.Results {
		res := &r.Results[i]
		res.Error = TruncateText(res.Error)
		res.HoldReason = TruncateText(res.HoldReason)
		res.BlockedBy = TruncateText(res.BlockedBy)
		res.DriftDetail = TruncateText(res.DriftDetail)
	}
	if f := r.Refused; f != nil {
		f.Reason = TruncateText(f.Reason)
		f.ComposedBy = TruncateText(f.ComposedBy)
	}
	if f := r.Transport; f != nil {
		f.Reason = TruncateText(f.Reason)
	}
}
