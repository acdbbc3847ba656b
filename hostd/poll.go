package hostd

import (
	"context"
	"log/slog"
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
	c     *client
	node  string
	wait  time.Duration
	log   *slog.Logger
	trust *trust
	after int64
	out   chan<- incoming
}

func (p *poller) run(ctx context.Context) {
	retry := newRetrier(time.Second, 30*time.Second)
	busy := overload{what: "fetching the declaration"}
	for ctx.Err() == nil {
		d, err := p.c.declaration(ctx, p.after, p.wait)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !retry.backOff(ctx, p.log, &busy, "fetching declaration", err) {
				return
			}
			continue
		}
		busy.over(p.log)
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
