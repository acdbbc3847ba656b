package postgres

import (
	"context"
	"database/sql"
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
		reportCall
		Results int64  `json:"results"`
		At      string `json:"at"`
	}
	calls := make([]call, len(args))
	for i, a := range args {
		calls[i] = call{reportCall{I: i, Node: a.Node, TokenHash: a.TokenHash, IfMatch: nullable(a.IfMatch), SendID: a.SendID,
			Generation: a.Generation, Digest: a.Digest, Signature: a.Signature, Outcome: a.Outcome}, a.Results, a.At}
	}
	return takenEach(ctx, "hq_report_steady", calls, func(ctx context.Context, body json.RawMessage) ([]pgsqlc.ReportsSteadyRow, error) {
		return q.q.ReportsSteady(ctx, body)
	})
}

// ReportsSettled: hq_report_settled for each, its arguments handed over as one JSON array.
func (q queries) ReportsSettled(ctx context.Context, args []driver.ReportSettledParams) ([]driver.ReportSteadyRow, error) {
	type call struct {
		reportCall
		Results    int64   `json:"results"`
		Attempt    int64   `json:"attempt"`
		Summary    string  `json:"summary"`
		StartedAt  *string `json:"started_at"`
		FinishedAt *string `json:"finished_at"`
		At         string  `json:"at"`
	}
	calls := make([]call, len(args))
	for i, a := range args {
		calls[i] = call{reportCall{I: i, Node: a.Node, TokenHash: a.TokenHash, IfMatch: nullable(a.IfMatch), SendID: a.SendID,
			Generation: a.Generation, Digest: a.Digest, Signature: a.Signature, Outcome: a.Outcome},
			a.Results, a.Attempt, a.Summary, nullableText(a.StartedAt), nullableText(a.FinishedAt), a.At}
	}
	return takenEach(ctx, "hq_report_settled", calls, func(ctx context.Context, body json.RawMessage) ([]pgsqlc.ReportsSettledRow, error) {
		return q.q.ReportsSettled(ctx, body)
	})
}

// reportCall is what a call of hq_report_steady and one of hq_report_settled both take, first,
// as a member of the JSON array ReportsSteady and ReportsSettled hand over; i is its place.
type reportCall struct {
	I          int    `json:"i"`
	Node       string `json:"node"`
	TokenHash  string `json:"token_hash"`
	IfMatch    *int64 `json:"if_match"`
	SendID     int64  `json:"send_id"`
	Generation int64  `json:"generation"`
	Digest     string `json:"digest"`
	Signature  string `json:"signature"`
	Outcome    string `json:"outcome"`
}

// answerRow is a row of ReportsSteady or ReportsSettled: which call it answers, and how.
type answerRow interface {
	pgsqlc.ReportsSteadyRow | pgsqlc.ReportsSettledRow
}

// takenEach hands calls to run as one JSON array and reads its rows as taken reads each
// function's answer, in the order of calls.
func takenEach[C any, R answerRow](ctx context.Context, fn string, calls []C, run func(context.Context, json.RawMessage) ([]R, error)) ([]driver.ReportSteadyRow, error) {
	body, err := json.Marshal(calls)
	if err != nil {
		return nil, err
	}
	answers, err := run(ctx, body)
	if err != nil {
		return nil, err
	}
	if len(answers) != len(calls) {
		return nil, fmt.Errorf("%s: %d answers for %d reports", fn, len(answers), len(calls))
	}
	rows := make([]driver.ReportSteadyRow, len(calls))
	for _, a := range answers {
		i, answer := pgsqlc.ReportsSteadyRow(a).I, pgsqlc.ReportsSteadyRow(a).Answer
		if i < 0 || i >= int64(len(rows)) {
			return nil, fmt.Errorf("%s: an answer for report %d of %d", fn, i, len(rows))
		}
		if rows[i], err = taken(fn, answer, nil); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func nullable(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func nullableText(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

// ReportSettled: hq_report_settled answers as hq_report_steady does.
func (q queries) ReportSettled(ctx context.Context, arg driver.ReportSettledParams) (driver.ReportSteadyRow, error) {
	answer, err := q.q.ReportSettled(ctx, pgsqlc.ReportSettledParams{Node: arg.Node, TokenHash: arg.TokenHash, IfMatch: arg.IfMatch, SendID: arg.SendID,
		Generation: arg.Generation, Digest: arg.Digest, Signature: arg.Signature, Outcome: arg.Outcome, Results: arg.Results,
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
