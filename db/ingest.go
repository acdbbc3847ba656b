package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/meshhq/hq"
)

// Ingest records one report from a node in one transaction: the resources' lifecycle, the
// report row (or a repeat of the last one), the sends it answers, and the node's last-seen time.
func (s *Store) Ingest(ctx context.Context, node string, rep hq.Report) (hq.ReportResponse, error) {
	var resp hq.ReportResponse
	if err := validateReport(rep); err != nil {
		return resp, err
	}
	outcome := outcomeDigest(rep)
	now := s.Now()
	at := hq.FormatTime(now)
	err := s.inTx(ctx, func(q *Queries) error {
		n, err := q.NodeGet(ctx, node)
		if err != nil {
			return notFound(err, "no node %s", node)
		}
		prev, hasPrev, err := lastReport(ctx, q, n)
		if err != nil {
			return err
		}
		rows, err := s.advanceAll(ctx, q, n, rep, outcome, prev.OutcomeDigest, now)
		if err != nil {
			return err
		}
		tally := hq.TallyResults(rep.Results, s.sentCount(ctx, q, node, rep), rows.isStuck)
		resp.Summary = tally.Line()
		if hasPrev && prev.OutcomeDigest == outcome {
			resp.ReportID = prev.ID
			err = q.ReportRepeat(ctx, ReportRepeatParams{ID: prev.ID, LastAt: at})
		} else {
			resp.ReportID, err = q.ReportInsert(ctx, reportRow(node, rep, outcome, resp.Summary, tally, at))
		}
		if err != nil {
			return err
		}
		if err := rows.write(ctx, q, resp.ReportID); err != nil {
			return err
		}
		if err := q.NodeSetReported(ctx, NodeSetReportedParams{Name: node, LastReportAt: sql.NullString{String: at, Valid: true}, LastReportID: sql.NullInt64{Int64: resp.ReportID, Valid: true}}); err != nil {
			return err
		}
		if err := recordSends(ctx, q, n, rep, at); err != nil {
			return err
		}
		resp.Stuck, resp.Retry, err = nodeFlags(ctx, q, node)
		return err
	})
	return resp, err
}

// advanced holds the rows a report moves, to be written once the report row has an id.
type advanced struct {
	changed []ResourceState
	stuck   map[string]bool
}

func (a advanced) isStuck(ref string) bool { return a.stuck[ref] }

// advanceAll computes every resource's next state. A report for an older generation than the
// node's describes specs that may have changed since, so it moves nothing; nor does a report
// identical to the last one without failures, the common case that must stay cheap.
func (s *Store) advanceAll(ctx context.Context, q *Queries, n Node, rep hq.Report, outcome, prevOutcome string, now time.Time) (advanced, error) {
	a := advanced{stuck: map[string]bool{}}
	if rep.Generation != n.Generation {
		return a, nil
	}
	if outcome == prevOutcome && !hasFailure(rep.Results) {
		return a, nil
	}
	rows, err := q.ResourceStateListByNode(ctx, n.Name)
	if err != nil {
		return a, err
	}
	byRef := make(map[string]int, len(rows))
	for i, r := range rows {
		byRef[hq.Ref(r.Module, r.Resource)] = i
	}
	p := stuckPolicy{attempts: s.StuckAttempts, after: s.StuckAfter}
	for _, res := range rep.Results {
		i, ok := byRef[hq.Ref(res.Module, res.Resource)]
		if !ok {
			continue // not declared (any more): nothing to move
		}
		next := advance(rows[i], res, now, p)
		if next != rows[i] {
			a.changed = append(a.changed, next)
		}
		if next.State == string(hq.StateStuck) {
			a.stuck[hq.Ref(res.Module, res.Resource)] = true
		}
	}
	return a, nil
}

func (a advanced) write(ctx context.Context, q *Queries, reportID int64) error {
	for _, r := range a.changed {
		if err := q.ResourceStateRecord(ctx, ResourceStateRecordParams{
			State: r.State, Since: r.Since, Attempts: r.Attempts, ConsecutiveFailures: r.ConsecutiveFailures,
			FailingSince: r.FailingSince, NeverApplied: r.NeverApplied, LastError: r.LastError,
			HoldReason: r.HoldReason, BlockedBy: r.BlockedBy, RetryRequested: r.RetryRequested,
			ReportID: sql.NullInt64{Int64: reportID, Valid: true}, Reason: r.Reason,
			Node: r.Node, Module: r.Module, Resource: r.Resource,
		}); err != nil {
			return fmt.Errorf("%s/%s: %w", r.Module, r.Resource, err)
		}
	}
	return nil
}

func hasFailure(results []hq.Result) bool {
	for _, r := range results {
		if r.Outcome == hq.StateFailed {
			return true
		}
	}
	return false
}

func lastReport(ctx context.Context, q *Queries, n Node) (Report, bool, error) {
	if !n.LastReportID.Valid {
		return Report{}, false, nil
	}
	r, err := q.ReportGet(ctx, n.LastReportID.Int64)
	if errors.Is(err, sql.ErrNoRows) {
		return Report{}, false, nil
	}
	return r, err == nil, err
}

// sentCount is how many resources the reported declaration named, from its send.
func (s *Store) sentCount(ctx context.Context, q *Queries, node string, rep hq.Report) int {
	send, err := q.SendFind(ctx, SendFindParams{Node: node, Generation: rep.Generation, Digest: rep.Digest})
	if err != nil || send.Resources == 0 {
		return len(rep.Results)
	}
	return int(send.Resources)
}

// recordSends moves the sends this report answers: what it applied, what that supersedes, and
// what it refused.
func recordSends(ctx context.Context, q *Queries, n Node, rep hq.Report, at string) error {
	if rep.Digest != "" && (rep.Generation != n.AppliedGeneration || rep.Digest != n.AppliedDigest) {
		if err := q.NodeSetApplied(ctx, NodeSetAppliedParams{Name: n.Name, AppliedGeneration: rep.Generation, AppliedDigest: rep.Digest, AppliedAt: sql.NullString{String: at, Valid: true}}); err != nil {
			return err
		}
		if err := q.SendMarkApplied(ctx, SendMarkAppliedParams{Node: n.Name, Generation: rep.Generation, Digest: rep.Digest, At: sql.NullString{String: at, Valid: true}}); err != nil {
			return err
		}
		if err := q.SendMarkSuperseded(ctx, SendMarkSupersededParams{Node: n.Name, Generation: rep.Generation, At: sql.NullString{String: at, Valid: true}}); err != nil {
			return err
		}
	}
	if rep.Refused == nil {
		return nil
	}
	return recordRefusal(ctx, q, n.Name, *rep.Refused, at)
}

func recordRefusal(ctx context.Context, q *Queries, node string, r hq.Refusal, at string) error {
	reason := firstLine(r.Reason)
	if r.SendID > 0 {
		n, err := q.SendMarkRefused(ctx, SendMarkRefusedParams{Node: node, ID: r.SendID, At: sql.NullString{String: at, Valid: true}, Reason: reason})
		if err != nil || n > 0 {
			return err
		}
	}
	by := r.ComposedBy
	if by == "" {
		by = "unknown"
	}
	sentAt := at
	if !r.ComposedAt.IsZero() {
		sentAt = hq.FormatTime(r.ComposedAt)
	}
	_, err := q.SendInsertRefused(ctx, SendInsertRefusedParams{Node: node, Generation: r.Generation, Digest: r.Digest, ComposedBy: by + " (no such send recorded)", SentAt: sentAt, At: sql.NullString{String: at, Valid: true}, Reason: reason})
	return err
}

// nodeFlags lists the node's stuck resources and the retries to hand it, clearing those.
func nodeFlags(ctx context.Context, q *Queries, node string) (stuck, retry []string, err error) {
	rows, err := q.ResourceStateListNotAppliedByNode(ctx, node)
	if err != nil {
		return nil, nil, err
	}
	stuck, retry = []string{}, []string{}
	for _, r := range rows {
		if r.State == string(hq.StateStuck) {
			stuck = append(stuck, hq.Ref(r.Module, r.Resource))
		}
	}
	rs, err := q.ResourceStateRetryList(ctx, node)
	if err != nil || len(rs) == 0 {
		return stuck, retry, err
	}
	for _, r := range rs {
		retry = append(retry, hq.Ref(r.Module, r.Resource))
	}
	return stuck, retry, q.ResourceStateClearRetry(ctx, node)
}

func reportRow(node string, rep hq.Report, outcome, summary string, t hq.Tally, at string) ReportInsertParams {
	held := 0
	for _, n := range t.Held {
		held += n
	}
	return ReportInsertParams{
		Node: node, Generation: rep.Generation, Digest: rep.Digest, Summary: summary, OutcomeDigest: outcome,
		Applied: int64(t.Applied), Failed: int64(t.Failed), Stuck: int64(t.Stuck), Held: int64(held),
		GroupedPending: int64(t.GroupedPending), Pending: int64(t.Pending),
		StartedAt: optTime(rep.StartedAt), FinishedAt: optTime(rep.FinishedAt), At: at,
	}
}

func optTime(t time.Time) sql.NullString {
	if t.IsZero() {
		return sql.NullString{}
	}
	return sql.NullString{String: hq.FormatTime(t), Valid: true}
}

// outcomeDigest identifies what a report says, leaving out timings, so two reports that say
// the same thing have the same digest.
func outcomeDigest(rep hq.Report) string {
	type result struct {
		M, R, O, E, H, B string
		A, C, D          bool
	}
	rs := make([]result, len(rep.Results))
	for i, r := range rep.Results {
		rs[i] = result{r.Module, r.Resource, string(r.Outcome), r.Error, r.HoldReason, r.BlockedBy, r.Attempted, r.Changed, r.Drift}
	}
	b, _ := json.Marshal(struct {
		G  int64
		D  string
		F  *hq.Refusal
		Rs []result
	}{rep.Generation, rep.Digest, rep.Refused, rs})
	return hq.DigestOf(b)
}

// validateReport rejects a report that could not have come from a host.
func validateReport(rep hq.Report) error {
	var errs []hq.FieldError
	if rep.Generation < 0 {
		errs = append(errs, hq.FieldError{Field: "generation", Message: "must not be negative"})
	}
	seen := make(map[string]bool, len(rep.Results))
	for i, r := range rep.Results {
		f := func(field, msg string) {
			errs = append(errs, hq.FieldError{Field: fmt.Sprintf("results[%d].%s", i, field), Message: msg})
		}
		if !hq.ValidName(r.Module) {
			f("module", "is not a valid name")
		}
		if !hq.ValidName(r.Resource) {
			f("resource", "is not a valid name")
		}
		if !r.Outcome.Outcome() {
			f("outcome", "must be applied, failed, held, grouped-pending or pending")
		}
		if ref := hq.Ref(r.Module, r.Resource); seen[ref] {
			f("resource", "reported twice")
		} else {
			seen[ref] = true
		}
	}
	if len(errs) > 0 {
		return &hq.Error{Code: hq.CodeInvalid, Message: fmt.Sprintf("%d problem(s) in the report", len(errs)), Details: errs}
	}
	return nil
}
