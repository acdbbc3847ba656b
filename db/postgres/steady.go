package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/db/postgres/internal/pgsqlc"
)

var _ driver.SteadyReports = queries{}

// ReportSteady: hq_report_steady answers as taken reads.
func (q queries) ReportSteady(ctx context.Context, arg driver.ReportSteadyParams) (driver.ReportSteadyRow, error) {
	answer, err := q.q.ReportSteady(ctx, pgsqlc.ReportSteadyParams(arg))
	return taken("hq_report_steady", answer, err)
}

// ReportsSteady: hq_report_steady for each, its arguments handed over as one JSON array.
func (q queries) ReportsSteady(ctx context.Context, args []driver.ReportSteadyParams) ([]driver.ReportSteadyRow, error) {
	type call struct {
		I          int    `json:"i"`
		Node       string `json:"node"`
		TokenHash  string `json:"token_hash"`
		IfMatch    *int64 `json:"if_match"`
		SendID     int64  `json:"send_id"`
		Generation int64  `json:"generation"`
		Digest     string `json:"digest"`
		Signature  string `json:"signature"`
		Outcome    string `json:"outcome"`
		Results    int64  `json:"results"`
		At         string `json:"at"`
	}
	calls := make([]call, len(args))
	for i, a := range args {
		calls[i] = call{I: i, Node: a.Node, TokenHash: a.TokenHash, SendID: a.SendID, Generation: a.Generation,
			Digest: a.Digest, Signature: a.Signature, Outcome: a.Outcome, Results: a.Results, At: a.At}
		if a.IfMatch.Valid {
			calls[i].IfMatch = &a.IfMatch.Int64
		}
	}
	body, err := json.Marshal(calls)
	if err != nil {
		return nil, err
	}
	answers, err := q.q.ReportsSteady(ctx, body)
	if err != nil {
		return nil, err
	}
	if len(answers) != len(args) {
		return nil, fmt.Errorf("hq_report_steady: %d answers for %d reports", len(answers), len(args))
	}
	rows := make([]driver.ReportSteadyRow, len(args))
	for _, a := range answers {
		if a.I < 0 || a.I >= int64(len(rows)) {
			return nil, fmt.Errorf("hq_report_steady: an answer for report %d of %d", a.I, len(rows))
		}
		if rows[a.I], err = taken("hq_report_steady", a.Answer, nil); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// ReportSettled: hq_report_settled answers as hq_report_steady does.
func (q queries) ReportSettled(ctx context.Context, arg driver.ReportSettledParams) (driver.ReportSteadyRow, error) {
	answer, err := q.q.ReportSettled(ctx, pgsqlc.ReportSettledParams{Node: arg.Node, TokenHash: arg.TokenHash, IfMatch: arg.IfMatch, SendID: arg.SendID,
		Generation: arg.Generation, Digest: arg.Digest, Signature: arg.Signature, Outcome: arg.Outcome, Refs: list(arg.Refs),
		Attempt: arg.Attempt, Summary: arg.Summary, StartedAt: arg.StartedAt, FinishedAt: arg.FinishedAt, At: arg.At})
	return taken("hq_report_settled", answer, err)
}

// taken reads what a function that takes a report in one call answered: its JSON object
// (hq_report_answer's), or an empty text when it took nothing.
func taken(fn, answer string, err error) (driver.ReportSteadyRow, error) {
	if err != nil || answer == "" {
		return driver.ReportSteadyRow{}, err
	}
	var a struct {
		ReportID   int64       `json:"report_id"`
		Summary    string      `json:"summary"`
		Generation int64       `json:"generation"`
		Stuck      [][2]string `json:"stuck"`
		Retry      [][2]string `json:"retry"`
	}
	if err := json.Unmarshal([]byte(answer), &a); err != nil {
		return driver.ReportSteadyRow{}, fmt.Errorf("%s: %w", fn, err)
	}
	return driver.ReportSteadyRow{Taken: true, ReportID: a.ReportID, Summary: a.Summary, Generation: a.Generation,
		Stuck: refs(a.Stuck), Retry: refs(a.Retry)}, nil
}

// refs joins [module, resource] pairs as hq.Ref does.
func refs(pairs [][2]string) []string {
	out := make([]string, len(pairs))
	for i, p := range pairs {
		out[i] = hq.Ref(p[0], p[1])
	}
	return out
}
