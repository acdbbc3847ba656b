package db

import (
	"context"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/internal/dbsqlc"
)

// ConvergedAt is how many nodes were converged, and how many were not, at one moment, by the
// report each node had made by then.
type ConvergedAt struct {
	At           time.Time
	Converged    int
	NotConverged int
}

// ConvergedHistory counts the nodes converged and not at n moments step apart from first, in
// one query over the reports the nodes made: a report row stands until the node's next, and
// counts as converged while every resource in it was applied and the node was not silent
// (SilentAfter after the row's last repeat, as for the status now). A node that had not
// reported yet is not counted; one deleted is counted until it was. It is the outcome of the
// reports, not the whole status: a node whose declaration moved on and has not reported since
// counts by its last report.
func (s *Store) ConvergedHistory(ctx context.Context, first time.Time, step time.Duration, n int) ([]ConvergedAt, error) {
	if n <= 0 || step < time.Millisecond {
		return nil, hq.Errorf(hq.CodeBadRequest, "a history wants at least one moment, at least a millisecond apart")
	}
	first, step = first.Truncate(time.Millisecond), step.Truncate(time.Millisecond)
	rows, err := s.reader().ReportConvergedAt(ctx, dbsqlc.ReportConvergedAtParams{Moments: int64(n), Since: hq.FormatTime(first),
		SinceMs: first.UnixMilli(), StepMs: step.Milliseconds(), SilentMs: s.opt.SilentAfter.Milliseconds()})
	if err != nil {
		return nil, err
	}
	out := make([]ConvergedAt, len(rows))
	for i, r := range rows {
		out[i] = ConvergedAt{At: first.Add(time.Duration(r.Moment) * step), Converged: int(r.Converged), NotConverged: int(r.NotConverged)}
	}
	return out, nil
}
