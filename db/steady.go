package db

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"errors"

	"github.com/meshhq/hq/db/driver"
)

// takeSteady takes a steady report statement by statement, for an engine whose statements
// cost no round trip (driver.SteadyContext: SQLite). It is what PostgreSQL's hq_report_steady
// does in one call, and what the general path writes for such a report: one read of all it is
// checked against, then the last report counted once more and the node's last report time; the
// send marked applied, the stuck resources listed and the retries handed out only when the read
// says there are some. The general path runs eight statements for it. A report that is not
// steady in the database's eyes changes nothing: Taken false, and the general path takes it.
func takeSteady(ctx context.Context, q driver.Queries, p driver.ReportSteadyParams) (driver.ReportSteadyRow, error) {
	var row driver.ReportSteadyRow
	c, err := q.(driver.SteadyContext).ReportSteadyContext(ctx, driver.ReportSteadyContextParams{Node: p.Node, SendID: p.SendID,
		Generation: p.Generation, Digest: p.Digest, Signature: p.Signature, Results: p.Results})
	if errors.Is(err, sql.ErrNoRows) {
		return row, nil // no such node, or no report yet
	}
	if err != nil || !steadyHolds(p, c) {
		return row, err
	}
	at := sql.NullString{String: p.At, Valid: true}
	if err := q.ReportRepeat(ctx, driver.ReportRepeatParams{ID: c.ReportID, LastAt: p.At}); err != nil {
		return row, err
	}
	if err := q.NodeSetReported(ctx, driver.NodeSetReportedParams{Name: p.Node, LastReportAt: at, LastReportID: sql.NullInt64{Int64: c.ReportID, Valid: true}}); err != nil {
		return row, err
	}
	if c.SendUnanswered {
		if err := q.SendMarkApplied(ctx, driver.SendMarkAppliedParams{Node: p.Node, Generation: p.Generation, Digest: p.Digest, At: at}); err != nil {
			return row, err
		}
	}
	row = driver.ReportSteadyRow{Taken: true, ReportID: c.ReportID, Summary: c.Summary, Generation: max(c.Generation, p.Generation),
		Stuck: []string{}, Retry: []string{}}
	if c.AnyStuck || c.AnyRetry {
		row.Stuck, row.Retry, err = nodeFlags(ctx, q, p.Node)
	}
	return row, err
}

// steadyHolds says whether a report is steady against what the database holds: the node's own
// token (when the report came with one), the generation asked for, no newer declaration applied
// than the node's, a send recorded for the node, and the node's last report saying the same.
func steadyHolds(p driver.ReportSteadyParams, c driver.ReportSteadyContextRow) bool {
	switch {
	case p.TokenHash != "" && subtle.ConstantTimeCompare([]byte(p.TokenHash), []byte(c.TokenHash)) != 1,
		p.IfMatch.Valid && p.IfMatch.Int64 != c.Generation,
		// A newer declaration applied moves the node's applied generation: the general path.
		p.Generation > c.AppliedGeneration,
		p.Generation == c.AppliedGeneration && p.Digest != c.AppliedDigest:
		return false
	}
	return c.SendKnown && c.OutcomeDigest == p.Outcome
}
