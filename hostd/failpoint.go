package hostd

import (
	"context"
	"time"
)

// Failpoints name the moments of a group's commit a test can pause hostd at, to kill it there
// and check that the next start puts the group back whole.
const (
	// failpointJournaled is after the journal is written, before the first member commits.
	failpointJournaled = "group-journaled"
	// failpointBetweenCommits is after the group's first member committed (the default).
	failpointBetweenCommits = "group-between-commits"
	// The steps of a container member's commit: the old one stopped, renamed aside, the new
	// one given its name, and started.
	failpointContainerStopped = "container-stopped"
	failpointContainerAside   = "container-aside"
	failpointContainerRenamed = "container-renamed"
	failpointContainerStarted = "container-started"
)

// failpoint is for tests only: with EngineConfig.FailpointGroupCommitPause set, hostd says so in
// its log and sleeps when it reaches point in a group's commit (EngineConfig.FailpointAt, by
// default between the first two commits), so a test can kill it there. Unset, as in
// production, it does nothing.
func (e *Engine) failpoint(ctx context.Context, point, group string) error {
	d := e.cfg.FailpointGroupCommitPause
	at := e.cfg.FailpointAt
	if at == "" {
		at = failpointBetweenCommits
	}
	if d <= 0 || point != at {
		return nil
	}
	msg := "failpoint: paused at " + point
	if point == failpointBetweenCommits {
		msg = "failpoint: paused between group commits"
	}
	e.log.Warn(msg, "group", group, "pause", d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
