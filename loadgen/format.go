package loadgen

import (
	"fmt"
	"strings"
	"time"
)

// Line is the phase's figures on one plain line.
func (r PhaseResult) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %7.1fs", r.Phase, r.Wall.Seconds())
	switch r.Unit {
	case "reports/s":
		fmt.Fprintf(&b, "  %d of %d report(s) acked (target %d, %d acked by the end), %.1f reports/s", r.Count, r.Offered, r.Target, r.AckedByEnd, r.Rate)
		if r.Late > 0 {
			fmt.Fprintf(&b, ", %d late", r.Late)
		}
		if r.Failover != nil {
			b.WriteString("; " + r.Failover.Line())
		}
	default:
		fmt.Fprintf(&b, "  %d node(s), %.1f nodes/s", r.Count, r.Rate)
	}
	if r.Put > 0 {
		fmt.Fprintf(&b, ", module put %s", ms(r.Put))
	}
	if r.Converged > 0 {
		fmt.Fprintf(&b, ", converged in %.1fs", r.Converged.Seconds())
	}
	if r.hasProc || r.CPU > 0 || r.RSS > 0 {
		b.WriteString(" | ")
		if len(r.Controllers) > 1 {
			fmt.Fprintf(&b, "%d controllers ", len(r.Controllers))
		}
		fmt.Fprintf(&b, "cpu %.2fs %.2f cores%s", r.CPU.Seconds(), r.Cores, r.perOp(r.CPU))
		if r.LateReports > 0 {
			fmt.Fprintf(&b, " (second half %s/report)", ms(r.LateCPU/time.Duration(r.LateReports)))
		}
		fmt.Fprintf(&b, ", rss %s peak %s", mb(r.RSS), mb(r.HWM))
	}
	if len(r.Controllers) > 1 {
		b.WriteString(" |")
		for i, c := range r.Controllers {
			if i > 0 {
				b.WriteString(";")
			}
			fmt.Fprintf(&b, " #%d", i+1)
			if c.hasProc || c.CPU > 0 || c.RSS > 0 {
				fmt.Fprintf(&b, " cpu %.2fs rss %s peak %s,", c.CPU.Seconds(), mb(c.RSS), mb(c.HWM))
			}
			fmt.Fprintf(&b, " %d req %d acked", c.Requests, c.Acked)
		}
	}
	if r.DBCPU > 0 {
		fmt.Fprintf(&b, " | db server cpu %.2fs%s", r.DBCPU.Seconds(), r.perOp(r.DBCPU))
		if r.DBWAL > 0 {
			fmt.Fprintf(&b, ", wal %s%s", mb(r.DBWAL), r.walPerOp())
		}
	}
	fmt.Fprintf(&b, " | loadgen cpu %.2fs, load %.1f", r.LoadgenCPU.Seconds(), r.Load)
	if r.DB > 0 {
		fmt.Fprintf(&b, " | db %s wal %s", mb(r.DB), mb(r.WAL))
	}
	fmt.Fprintf(&b, " | %d req p50 %s p90 %s p99 %s max %s", r.Requests, ms(r.P50), ms(r.P90), ms(r.P99), ms(r.Max))
	if r.Requests > 0 {
		fmt.Fprintf(&b, " (p99 second half %s, slowest second %s at %s", ms(r.LateP99), ms(r.WorstP99), r.WorstAt)
		if len(r.ByTen) > 1 {
			tens := make([]string, len(r.ByTen))
			for i, d := range r.ByTen {
				tens[i] = ms(d)
			}
			fmt.Fprintf(&b, "; by 10 s %s", strings.Join(tens, " "))
		}
		b.WriteString(")")
	}
	s := Snapshot{Statuses: r.Statuses}
	if bad := s.NonOK(); len(bad) > 0 {
		fmt.Fprintf(&b, " | non-2xx %s", strings.Join(bad, " "))
	}
	fmt.Fprintf(&b, " | /status %s", ms(r.StatusTook))
	if r.StatusHWM > 0 {
		fmt.Fprintf(&b, " (peak %s)", mb(r.StatusHWM))
	}
	fmt.Fprintf(&b, ", / %s %s", ms(r.PageTook), kb(int64(r.PageBytes)))
	if r.PageHWM > 0 {
		fmt.Fprintf(&b, " (peak %s)", mb(r.PageHWM))
	}
	return b.String()
}

// perOp is cpu over what the phase did, " 1.49ms/report" (or "/node"), or "" when it did nothing.
func (r PhaseResult) perOp(cpu time.Duration) string {
	if r.Count <= 0 || cpu <= 0 {
		return ""
	}
	unit := "node"
	if r.Unit == "reports/s" {
		unit = "report"
	}
	return " " + ms(cpu/time.Duration(r.Count)) + "/" + unit
}

// walPerOp is the log written per node or report of the phase, " 1.2KB/report", or "".
func (r PhaseResult) walPerOp() string {
	if r.Count <= 0 || r.DBWAL <= 0 {
		return ""
	}
	unit := "node"
	if r.Unit == "reports/s" {
		unit = "report"
	}
	return fmt.Sprintf(" %.1fKB/%s", float64(r.DBWAL)/float64(r.Count)/1000, unit)
}

func ms(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Second:
		return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
}

func mb(n int64) string { return fmt.Sprintf("%.1fMB", float64(n)/(1<<20)) }

func kb(n int64) string { return fmt.Sprintf("%.0fKB", float64(n)/(1<<10)) }
