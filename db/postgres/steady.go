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
