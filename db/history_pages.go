package db

import (
	"context"
	"math"
	"time"

	"github.com/meshhq/hq"
)

// ConvergedAt is how many nodes were converged, and how many were not, at one moment, by the
// report each node had made by then.
type ConvergedAt struct {
	At           time.Time
	Converged    int
	NotConverged int
}

// ConvergedHistory counts the nodes converged and not at n moments step apart from first, by
// the reports the nodes made: a report row stands until the node's next, and counts as
// converged while every resource in it was applied and the node was not silent (SilentAfter
// after the row's last repeat, as for the status now). A node that had not reported yet is not
// counted; one deleted is counted until it was. It is the outcome of the reports, not the
// whole status: a node whose declaration moved on and has not reported since counts by its
// last report.
//
// Each row becomes the edges of the moments it covers, and the counts are the running sums of
// the edges. The rows are read from the one current at first on, and paired here, each with
// the next of its node, as they are read, rather than in the database, where a window function
// would sort them again.
func (s *Store) ConvergedHistory(ctx context.Context, first time.Time, step time.Duration, n int) ([]ConvergedAt, error) {
	if n <= 0 || step < time.Millisecond {
		return nil, hq.Errorf(hq.CodeBadRequest, "a history wants at least one moment, at least a millisecond apart")
	}
	first, step = first.Truncate(time.Millisecond), step.Truncate(time.Millisecond)
	since, stepMs, silentMs := first.UnixMilli(), step.Milliseconds(), s.opt.SilentAfter.Milliseconds()
	// moment is the index of the first moment at or after t (in milliseconds); n is past the
	// last, and every edge at or after it is out of the history.
	moment := func(t int64) int {
		if t <= since {
			return 0
		}
		return int(min(int64(n), (t-since+stepMs-1)/stepMs))
	}
	// The edges: a node counted converged from moment a to c, and not converged from c to b.
	conv, not := make([]int, n+1), make([]int, n+1)
	edge := func(a, b, c int) {
		if a < c {
			conv[a]++
			conv[c]--
		}
		if c < b {
			not[c]++
			not[b]--
		}
	}
	rows, err := s.reader().ReportStandingRows(ctx, hq.FormatTime(first))
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		a := millis(r.At)
		b := int64(math.MaxInt64)
		if i+1 < len(rows) && rows[i+1].Node == r.Node {
			b = millis(rows[i+1].At)
		}
		if r.DeletedAt != "" {
			b = min(b, millis(r.DeletedAt))
		}
		c := a
		if r.Fine == 1 {
			c = min(millis(r.LastAt)+silentMs+1, b)
		}
		edge(moment(a), moment(b), moment(c))
	}
	out := make([]ConvergedAt, n)
	c, nc := 0, 0
	for i := range out {
		c, nc = c+conv[i], nc+not[i]
		out[i] = ConvergedAt{At: first.Add(time.Duration(i) * step), Converged: c, NotConverged: nc}
	}
	return out, nil
}

// millis reads a stored time (hq.TimeLayout) as milliseconds since the epoch, by its fixed
// positions: a day's reports of a fleet are tens of thousands of them, read in one loop.
// Anything else is read by time.Parse.
func millis(s string) int64 {
	if len(s) != len(hq.TimeLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z' {
		return hq.ParseTime(s).UnixMilli()
	}
	num := func(from, to int) int {
		n := 0
		for _, c := range s[from:to] {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, h, mi, sec, ms := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0 {
		return hq.ParseTime(s).UnixMilli()
	}
	return time.Date(y, time.Month(mo), d, h, mi, sec, ms*int(time.Millisecond), time.UTC).UnixMilli()
}
