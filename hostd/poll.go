package hostd

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/meshhq/hq"
)

// incoming is a declaration the poller received, with the error verifying it, if any.
type incoming struct {
	d   *hq.Declaration
	err error
}

// poller long-polls the controller for declarations newer than the highest generation it has
// seen, verifying each with the key held (adopting a key the one held vouches for) before
// handing it on.
type poller struct {
	c    *client
	node string
	wait time.Duration
	// interval is the longest a controller holding as many long-polls as it will may make the
	// poller wait before it asks again: the host's own reconcile interval.
	interval time.Duration
	log      *slog.Logger
	trust    *trust
	after    int64
	out      chan<- incoming
}

// pause waits before the next poll as long as the controller asked, at most the interval, and
// spread out so hosts told the same do not come back together. It reports false when ctx ends.
func (p *poller) pause(ctx context.Context, asked time.Duration) bool {
	d := asked
	if p.interval > 0 {
		d = min(d, p.interval)
	}
	t := time.NewTimer(d/2 + rand.N(d/2+1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (p *poller) run(ctx context.Context) {
	retry := newRetrier(time.Second, 30*time.Second)
	busy := overload{what: "fetching the declaration"}
	for ctx.Err() == nil {
		d, call := p.c.Declaration(ctx, p.after, p.wait)
		later := call.RetryAfter
		if err := call.Failure(); err != nil {
			if ctx.Err() != nil {
				return
			}
			if !retry.backOff(ctx, p.log, &busy, "fetching declaration", err) {
				return
			}
			continue
		}
		busy.over(p.log)
		if later > 0 && !p.pause(ctx, later) {
			return
		}
		if d == nil {
			retry.reset()
			continue
		}
		verr := p.trust.verify(d, p.node)
		select {
		case p.out <- incoming{d: d, err: verr}:
		case <-ctx.Done():
			return
		}
		if verr != nil {
			// A declaration that does not verify says nothing true about its generation: moving
			// after on would let one forged number fence this host out. Ask again, slower.
			if !retry.wait(ctx, 0) {
				return
			}
			continue
		}
		retry.reset()
		// A verified one moves after on even when it is refused as stale, or the controller
		// would send it again at once.
		p.after = max(p.after, d.Generation)
	}
}
