package hostd

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/meshhq/hq"
)

// delivered is a report the controller accepted, with its answer.
type delivered struct {
	report *hq.Report
	resp   *hq.ReportResponse
}

// reporter posts reports, retrying with back-off. Only the newest unsent report is kept: an
// older one describes a machine that no longer exists.
type reporter struct {
	c   *client
	log *slog.Logger
	out chan<- delivered

	mu   sync.Mutex
	next *hq.Report
	kick chan struct{}
}

func newReporter(c *client, log *slog.Logger, out chan<- delivered) *reporter {
	return &reporter{c: c, log: log, out: out, kick: make(chan struct{}, 1)}
}

// submit replaces any unsent report with r.
func (r *reporter) submit(rep *hq.Report) {
	r.mu.Lock()
	r.next = rep
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *reporter) take() *hq.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.next
	r.next = nil
	return rep
}

// putBack keeps a report that failed to post, unless a newer one is already waiting.
func (r *reporter) putBack(rep *hq.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == nil {
		r.next = rep
	}
}

func (r *reporter) run(ctx context.Context) {
	retry := newRetrier(time.Second, time.Minute)
	busy := overload{what: "posting the report"}
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		for rep := r.take(); rep != nil; rep = r.take() {
			resp, err := postReport(ctx, r.c, rep)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// Kept until it is posted, or a newer report replaces it.
				r.putBack(rep)
				if !retry.backOff(ctx, r.log, &busy, "posting report", err) {
					return
				}
				continue
			}
			busy.over(r.log)
			retry.reset()
			select {
			case r.out <- delivered{report: rep, resp: resp}:
			case <-ctx.Done():
				return
			}
		}
	}
}
