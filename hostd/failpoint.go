package hostd

import (
	"context"
	"time"
)

// failpointGroupCommitPause is for tests only: with EngineConfig.FailpointGroupCommitPause
// set, hostd says so in its log and sleeps after committing a group's first member, so a
// test can kill it while the group is half committed and check that the next start rolls
// the group back. Unset, as in production, it does nothing.
func (e *Engine) failpointGroupCommitPause(ctx context.Context, group string) error {
	d := e.cfg.FailpointGroupCommitPause
	if d <= 0 {
		return nil
	}
	e.log.Warn("failpoint: paused between group commits", "group", group, "pause", d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
