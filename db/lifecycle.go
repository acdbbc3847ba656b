package db

import (
	"github.com/meshhq/hq/db/driver"

	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/meshhq/hq"
)

// stuckPolicy decides when a failing resource is stuck.
type stuckPolicy struct {
	attempts int
	after    time.Duration
}

// advance returns the row a result moves r to. It is the one place the controller decides a
// resource's state; the database trigger then checks the move against the lifecycle table.
func advance(r driver.ResourceState, res hq.Result, now time.Time, p stuckPolicy) driver.ResourceState {
	n := r
	n.HoldReason, n.BlockedBy = res.HoldReason, res.BlockedBy
	// An attempt is work: a change made or a failure. A check that found the resource already
	// in place is not one, so a steady node's rows do not change on every report.
	if res.Attempted && (res.Changed || res.Outcome == hq.StateFailed) {
		n.Attempts++
	}
	switch res.Outcome {
	case hq.StateApplied:
		n.State, n.ConsecutiveFailures, n.FailingSince = string(hq.StateApplied), 0, sql.NullString{}
		n.NeverApplied, n.LastError = false, ""
		n.Reason = "applied"
		if res.Drift {
			n.Reason = "applied: drift put back"
		}
	case hq.StateFailed:
		failed(&n, r, res, now, p)
	case hq.StateHeld:
		// The hold is the reason now: an error of an earlier attempt is not kept beside it.
		n.State, n.ConsecutiveFailures, n.FailingSince = string(hq.StateHeld), 0, sql.NullString{}
		n.LastError = ""
		n.Reason = "held: " + res.HoldReason
	case hq.StateGroupedPending:
		n.State, n.LastError = string(hq.StateGroupedPending), res.Error
		n.Reason = "grouped-pending: its group did not apply"
	default:
		n.State, n.LastError = string(hq.StatePending), ""
		n.Reason = "pending"
		if res.BlockedBy != "" {
			n.Reason = "pending: blocked by " + res.BlockedBy
		}
	}
	if n.State != r.State {
		n.Since = hq.FormatTime(now)
	}
	n.HeldFound, n.HeldFoundOmitted = heldFound(res)
	return n
}

// heldFound is what a held result says hostd found in the file, as its row keeps it: nothing
// for any other result, so a resource that leaves held forgets what was found.
func heldFound(res hq.Result) (sql.NullString, string) {
	f := res.HeldFound
	switch {
	case res.Outcome != hq.StateHeld || f == nil:
		return sql.NullString{}, ""
	case f.Omitted != "":
		return sql.NullString{}, f.Omitted
	}
	return sql.NullString{String: f.Text, Valid: true}, ""
}

// failed counts an attempted failure and escalates to stuck past the policy's count or
// duration. Only a resource already failing can become stuck, as the lifecycle requires; a
// result skipped by back-off counts no attempt but can still pass the duration.
func failed(n *driver.ResourceState, r driver.ResourceState, res hq.Result, now time.Time, p stuckPolicy) {
	n.LastError = res.Error
	if res.Attempted {
		n.ConsecutiveFailures++
		if !n.FailingSince.Valid {
			n.FailingSince = sql.NullString{String: hq.FormatTime(now), Valid: true}
		}
	}
	failing := r.State == string(hq.StateFailed) || r.State == string(hq.StateStuck)
	if !failing {
		n.State, n.Reason = string(hq.StateFailed), "failed: "+firstLine(res.Error)
		return
	}
	over := n.ConsecutiveFailures >= int64(p.attempts) ||
		p.after > 0 && n.FailingSince.Valid && now.Sub(hq.ParseTime(n.FailingSince.String)) >= p.after
	if over && r.State == string(hq.StateFailed) {
		n.State = string(hq.StateStuck)
		n.Reason = fmt.Sprintf("stuck: %d consecutive failed attempts since %s", n.ConsecutiveFailures, n.FailingSince.String)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
