package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
	"github.com/meshhq/hq/rollout"
)

// lastAttempt is the consecutive failures at which a failing resource is on its last allowed
// attempt: one more failure makes it stuck. A node with such a resource fails its rollout
// then rather than one attempt later.
func (s *Store) lastAttempt() int64 { return int64(max(1, s.opt.StuckAttempts-1)) }

// startRollouts begins a rollout of revision to for every placement of module with a rollout
// policy, in q's transaction, before any pin moves: the mover leaves the pins a rollout
// governs to the rollout loop.
func (s *Store) startRollouts(ctx context.Context, q driver.Queries, module string, to int64) (bool, error) {
	ps, err := q.PlacementList(ctx)
	if err != nil {
		return false, err
	}
	started := false
	for _, p := range ps {
		if p.Module != module || p.Rollout == "" {
			continue
		}
		if _, err := s.beginRollout(ctx, q, p, p.Rollout, newRollout{to: to, superseded: fmt.Sprintf("superseded by revision %d", to)}); err != nil {
			return false, err
		}
		started = true
	}
	return started, nil
}

// newRollout is what starts a rollout: the revision it moves to and, for a rollback, the
// module's newest revision then; why it supersedes an unfinished one; its first reason.
type newRollout struct {
	to, rollbackOf     int64
	superseded, reason string
}

// beginRollout starts a rollout of placement p's nodes to revision n.to under policy, in q's
// transaction. An unfinished rollout of the placement ends aborted, superseded, and its nodes
// keep the pins they have; the new one starts from them, so its from-revisions are what its
// nodes are pinned to now, not the revision before n.to.
func (s *Store) beginRollout(ctx context.Context, q driver.Queries, p driver.Placement, policy string, n newRollout) (int64, error) {
	old, err := q.RolloutListActiveOfPlacement(ctx, driver.RolloutListActiveOfPlacementParams{Placement: p.Name, Module: p.Module})
	if err != nil {
		return 0, err
	}
	for _, id := range old {
		if _, err := q.RolloutAbort(ctx, driver.RolloutAbortParams{ID: id, Reason: n.superseded, Now: s.now()}); err != nil {
			return 0, err
		}
	}
	froms, err := q.AssignmentRevisionsOfPlacement(ctx, driver.AssignmentRevisionsOfPlacementParams{Placement: p.Name, Module: p.Module, ToRevision: n.to})
	if err != nil {
		return 0, err
	}
	from := n.to - 1 // no node to move: the revision before, as a name for it
	if len(froms) > 0 {
		from = froms[0]
	}
	fromsText, err := json.Marshal(froms)
	if err != nil {
		return 0, err
	}
	arg := driver.RolloutInsertParams{Module: p.Module, Placement: p.Name, FromRevision: from, FromRevisions: string(fromsText),
		ToRevision: n.to, RollbackOf: n.rollbackOf, Policy: policy, Reason: n.reason, Now: s.now()}
	if run, ok := ctx.Value(dryRunKey{}).(*dryRun); ok {
		arg.ID = run.rolloutID()
	}
	id, err := q.RolloutInsert(ctx, arg)
	if err != nil {
		return 0, err
	}
	if _, err := q.RolloutNodeInsertFromPlacement(ctx, driver.RolloutNodeInsertFromPlacementParams{Rollout: id, Placement: p.Name,
		Module: p.Module, ToRevision: n.to}); err != nil {
		return 0, err
	}
	// Counted at once, so the rollout's line is true before the loop's first step.
	if err := setRolloutCounts(ctx, q, id); err != nil {
		return 0, err
	}
	return id, planned(ctx, q, id, p)
}

// rolloutPolicy reads a stored policy. One that does not decode or does not hold is an error:
// acting on the default in its place would move nodes as no one asked.
func rolloutPolicy(text string) (hq.RolloutPolicy, error) {
	var p hq.RolloutPolicy
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		return p, fmt.Errorf("stored rollout policy does not decode: %w", err)
	}
	if err := p.Normalize(); err != nil {
		// Not %w: the stored row is at fault, not the request that read it, so its code is not
		// the request's.
		return p, fmt.Errorf("stored rollout policy does not hold: %v", err)
	}
	return p, nil
}

// stepRollout moves one rollout on, in q's transaction, from what the nodes reported: it
// marks in-flight nodes done or failed (set-based, in two statements), pins failed nodes back
// when the policy says so, then pauses, completes, or advances the next wave, as package
// rollout decides. It returns the generations it moved and whether more is to do at once.
func (s *Store) stepRollout(ctx context.Context, q driver.Queries, r driver.Rollout) (map[string]int64, bool, error) {
	pol, err := rolloutPolicy(r.Policy)
	if err != nil {
		return nil, false, err
	}
	now := s.now()
	gens := map[string]int64{}
	if _, err := q.RolloutNodeDeleteGone(ctx, driver.RolloutNodeDeleteGoneParams{Rollout: r.ID, Module: r.Module}); err != nil {
		return nil, false, err
	}
	if _, err := q.RolloutNodeMarkDone(ctx, driver.RolloutNodeMarkDoneParams{Rollout: r.ID, Module: r.Module, Now: nullString(now)}); err != nil {
		return nil, false, err
	}
	if _, err := q.RolloutNodeMarkFailed(ctx, driver.RolloutNodeMarkFailedParams{Rollout: r.ID, Module: r.Module, Now: nullString(now),
		LastAttempt: s.lastAttempt(), LateReason: "not converged within " + pol.ProgressDeadline,
		Deadline: nullString(hq.FormatTime(s.clock().Add(-pol.Deadline())))}); err != nil {
		return nil, false, err
	}
	chunk, err := s.rolloutChunk(ctx, q, r)
	if err != nil {
		return nil, false, err
	}
	more := false
	if pol.AutoRevert {
		failed, err := q.RolloutNodeListFailed(ctx, driver.RolloutNodeListParams{Rollout: r.ID, Max: int64(chunk) + 1})
		if err != nil {
			return nil, false, err
		}
		more = len(failed) > chunk
		g, err := s.revertNodes(ctx, q, r, failed[:min(len(failed), chunk)], "pinned back to its revision: auto_revert")
		if err != nil {
			return nil, false, err
		}
		for n, gen := range g {
			gens[n] = gen
		}
	}
	c, err := q.RolloutNodeCounts(ctx, r.ID)
	if err != nil {
		return nil, false, err
	}
	if err := q.RolloutSetCounts(ctx, driver.RolloutSetCountsParams{ID: r.ID, Nodes: c.Nodes, Done: c.Done, InFlight: c.InFlight, Failed: c.Failed}); err != nil {
		return nil, false, err
	}
	if hq.RolloutState(r.State) == hq.RolloutPaused {
		return gens, more, s.repausedReason(ctx, q, r, pol, c)
	}
	if hq.RolloutState(r.State) != hq.RolloutProgressing {
		return gens, more, nil
	}
	next := rollout.Next(pol, rollout.Counts{Nodes: int(c.Nodes), Pending: int(c.Pending), InFlight: int(c.InFlight),
		Done: int(c.Done), Failed: int(c.Failed), Forgiven: int(r.Forgiven), FirstWaveInFlight: int(c.FirstWaveInFlight), LastWave: int(c.LastWave),
		Promoted: r.Promoted == 1})
	switch next.Action {
	case rollout.Pause:
		reason, err := failureReason(ctx, q, r.ID)
		if err != nil {
			return nil, false, err
		}
		_, err = q.RolloutPause(ctx, driver.RolloutPauseParams{ID: r.ID, Reason: reason, Now: now})
		return gens, more, err
	case rollout.Complete:
		_, err := q.RolloutComplete(ctx, driver.RolloutCompleteParams{ID: r.ID, Reason: next.Reason, Now: now})
		return gens, more, err
	case rollout.Wait:
		return gens, more, nil
	}
	pending, err := q.RolloutNodeListPending(ctx, driver.RolloutNodeListParams{Rollout: r.ID, Max: int64(min(next.Start, chunk))})
	if err != nil {
		return nil, false, err
	}
	g, err := s.advanceNodes(ctx, q, r, pending, int64(next.Wave))
	if err != nil {
		return nil, false, err
	}
	for node, gen := range g {
		gens[node] = gen
	}
	return gens, more || next.Start > chunk, setRolloutCounts(ctx, q, r.ID)
}

// repausedReason keeps a rollout paused past its failure budget saying every node that failed:
// the nodes in flight when it paused go on, and may fail after. It reads the failures only
// when their count moved, and leaves an operator's pause worded as it is.
func (s *Store) repausedReason(ctx context.Context, q driver.Queries, r driver.Rollout, pol hq.RolloutPolicy, c driver.RolloutNodeCountsRow) error {
	if c.Failed == r.Failed || c.Failed-r.Forgiven <= int64(pol.FailureBudget) || strings.HasPrefix(r.Reason, reasonOperatorPaused) {
		return nil
	}
	reason, err := failureReason(ctx, q, r.ID)
	if err != nil || reason == r.Reason {
		return err
	}
	return q.RolloutSetPausedReason(ctx, driver.RolloutPauseParams{ID: r.ID, Reason: reason, Now: s.now()})
}

// setRolloutCounts keeps the rollout's counts, which its line reads, equal to its nodes'.
func setRolloutCounts(ctx context.Context, q driver.Queries, id int64) error {
	c, err := q.RolloutNodeCounts(ctx, id)
	if err != nil {
		return err
	}
	return q.RolloutSetCounts(ctx, driver.RolloutSetCountsParams{ID: id, Nodes: c.Nodes, Done: c.Done, InFlight: c.InFlight, Failed: c.Failed})
}

// rolloutChunk is how many of a rollout's nodes one transaction moves: like the mover's
// chunks, about moveChunkRows resource rows on at most moveChunkNodes nodes.
func (s *Store) rolloutChunk(ctx context.Context, q driver.Queries, r driver.Rollout) (int, error) {
	rs, err := s.resources(ctx, q, r.Module, r.ToRevision)
	if err != nil {
		return 0, err
	}
	return min(moveChunkNodes, max(1, moveChunkRows/max(1, len(rs)))), nil
}

// byRevision groups nodes by the revision they had, so each group's difference is worked
// out once.
func byRevision(ps []driver.RolloutNodePin) map[int64][]string {
	out := map[int64][]string{}
	for _, p := range ps {
		out[p.FromRevision] = append(out[p.FromRevision], p.Node)
	}
	return out
}

// advanceNodes pins nodes to the rollout's revision, a wave, and records them in flight at
// the generation that declares it.
func (s *Store) advanceNodes(ctx context.Context, q driver.Queries, r driver.Rollout, ps []driver.RolloutNodePin, wave int64) (map[string]int64, error) {
	gens := map[string]int64{}
	toRes, err := s.resources(ctx, q, r.Module, r.ToRevision)
	if err != nil {
		return nil, err
	}
	for from, nodes := range byRevision(ps) {
		fromRes, err := s.resources(ctx, q, r.Module, from)
		if err != nil {
			return nil, err
		}
		g, err := s.pinNodes(ctx, q, r.Module, diffResources(fromRes, toRes, r.ToRevision), r.ToRevision, nodes,
			fmt.Sprintf("module %s revision %d, rollout %d wave %d", r.Module, r.ToRevision, r.ID, wave))
		if err != nil {
			return nil, err
		}
		if err := q.RolloutNodeAdvance(ctx, driver.RolloutNodeAdvanceParams{Rollout: r.ID, Wave: wave, Now: nullString(s.now()), Nodes: nodes}); err != nil {
			return nil, err
		}
		for n, gen := range g {
			gens[n] = gen
		}
	}
	return gens, nil
}

// revertNodes pins nodes back to the revision each had before the rollout and marks them
// reverted.
func (s *Store) revertNodes(ctx context.Context, q driver.Queries, r driver.Rollout, ps []driver.RolloutNodePin, reason string) (map[string]int64, error) {
	gens := map[string]int64{}
	if len(ps) == 0 {
		return gens, nil
	}
	toRes, err := s.resources(ctx, q, r.Module, r.ToRevision)
	if err != nil {
		return nil, err
	}
	for from, nodes := range byRevision(ps) {
		fromRes, err := s.resources(ctx, q, r.Module, from)
		if err != nil {
			return nil, err
		}
		g, err := s.pinNodes(ctx, q, r.Module, diffResources(toRes, fromRes, from), from, nodes,
			fmt.Sprintf("module %s back to revision %d, rollout %d", r.Module, from, r.ID))
		if err != nil {
			return nil, err
		}
		if err := q.RolloutNodeRevert(ctx, driver.RolloutNodeRevertParams{Rollout: r.ID, Now: nullString(s.now()), Reason: reason, Nodes: nodes}); err != nil {
			return nil, err
		}
		for n, gen := range g {
			gens[n] = gen
		}
	}
	return gens, nil
}

// failureReason says what failed where (rollout.Failures).
func failureReason(ctx context.Context, q driver.Queries, id int64) (string, error) {
	rows, err := q.RolloutNodeListFailedReasons(ctx, id)
	if err != nil {
		return "", err
	}
	failed := make([]rollout.Failed, len(rows))
	for i, r := range rows {
		failed[i] = rollout.Failed{Node: r.Node, Reason: r.Reason}
	}
	return rollout.Failures(failed), nil
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }

// WakeRollouts tells the rollout worker something changed (a report came in), when it runs.
func (s *Store) WakeRollouts() {
	// Without a rollout under way (or a worker to find one) a report has nothing to move on:
	// the worker's own period finds one another controller starts.
	if !s.rolloutsActive.Load() {
		return
	}
	select {
	case s.rolloutBell <- struct{}{}:
	default:
	}
}

// rolloutLoop is the rollout worker's run: it moves rollouts on, waking on WakeRollouts and
// every RolloutEvery, from the start, for the reasons the mover does.
func (s *Store) rolloutLoop(ctx context.Context, ready func()) {
	defer s.rolloutsActive.Store(false)
	ready()
	tick := time.NewTicker(s.opt.RolloutEvery)
	defer tick.Stop()
	for {
		for {
			more, err := s.stepRollouts(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.Error("moving rollouts on", "err", err)
			}
			if err != nil || !more {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.rolloutBell:
		case <-tick.C:
		}
	}
}

// stepRollouts steps every unfinished rollout, each in its own transaction.
func (s *Store) stepRollouts(ctx context.Context) (bool, error) {
	active, err := s.reader().RolloutListActive(ctx)
	if err != nil {
		return false, err
	}
	s.rolloutsActive.Store(len(active) > 0)
	more := false
	var errs []error
	for _, a := range active {
		var gens map[string]int64
		var m bool
		err := s.inTx(ctx, func(q driver.Queries) error {
			r, err := q.RolloutGet(ctx, a.ID) // as it is now, inside the writer
			if err != nil {
				return err
			}
			if st := hq.RolloutState(r.State); st != hq.RolloutProgressing && st != hq.RolloutPaused {
				return nil
			}
			gens, m, err = s.stepRollout(ctx, q, r)
			return err
		})
		if err != nil {
			// One rollout that cannot step (a stored policy that no longer reads) does not
			// hold up the others.
			errs = append(errs, fmt.Errorf("rollout %d: %w", a.ID, err))
			continue
		}
		s.ringAll(gens)
		more = more || m
	}
	return more, errors.Join(errs...)
}

// readRollout is the view of a stored rollout; a stored policy that does not read is an error
// naming the rollout.
func readRollout(r driver.Rollout) (hq.Rollout, error) {
	pol, err := rolloutPolicy(r.Policy)
	if err != nil {
		return hq.Rollout{}, fmt.Errorf("rollout %d: %w", r.ID, err)
	}
	v := hq.Rollout{ID: r.ID, Module: r.Module, Placement: r.Placement, FromRevision: r.FromRevision, ToRevision: r.ToRevision,
		State: hq.RolloutState(r.State), Policy: pol, Nodes: int(r.Nodes), Done: int(r.Done),
		InFlight: int(r.InFlight), Failed: int(r.Failed), Forgiven: int(r.Forgiven), Reason: r.Reason,
		CreatedAt: hq.ParseTime(r.CreatedAt), UpdatedAt: hq.ParseTime(r.UpdatedAt), EndedAt: nullTime(r.EndedAt)}
	v.FromRevisions, v.Promoted, v.RollbackOf = fromRevisions(r), r.Promoted == 1, r.RollbackOf
	v.SteeredBy, v.Steered = r.SteeredBy, r.Steered
	v.Line = v.MakeLine()
	return v, nil
}

// fromRevisions reads the revisions a rollout's nodes moved from; a rollout from before they
// were kept moved from its from_revision.
func fromRevisions(r driver.Rollout) []int64 {
	var out []int64
	if json.Unmarshal([]byte(r.FromRevisions), &out) != nil || len(out) == 0 {
		return []int64{r.FromRevision}
	}
	return out
}

// rolloutView is readRollout for the operator's pages (pages.go), which list a rollout whose
// stored policy does not read without its policy, rather than fail the whole page.
func rolloutView(r driver.Rollout) hq.Rollout {
	v, err := readRollout(r)
	if err != nil {
		v = hq.Rollout{ID: r.ID, Module: r.Module, Placement: r.Placement, FromRevision: r.FromRevision, FromRevisions: fromRevisions(r),
			ToRevision: r.ToRevision, State: hq.RolloutState(r.State), Reason: r.Reason, RollbackOf: r.RollbackOf}
	}
	return v
}

// GetRollout returns a rollout with every node's progress.
func (s *Store) GetRollout(ctx context.Context, id int64) (hq.Rollout, error) {
	var v hq.Rollout
	err := s.inReadTx(ctx, func(q driver.Queries) error {
		r, err := q.RolloutGet(ctx, id)
		if err != nil {
			return notFound(err, "no rollout %d", id)
		}
		if v, err = readRollout(r); err != nil {
			return err
		}
		rows, err := q.RolloutNodeList(ctx, id)
		if err != nil {
			return err
		}
		v.Progress = make([]hq.RolloutNode, len(rows))
		for i, n := range rows {
			v.Progress[i] = hq.RolloutNode{Node: n.Node, Wave: int(n.Wave), State: n.State, FromRevision: n.FromRevision,
				Generation: n.Generation, Reason: n.Reason, StartedAt: nullTime(n.StartedAt), EndedAt: nullTime(n.EndedAt)}
		}
		return nil
	})
	return v, err
}

// ListRollouts returns the newest rollouts first, without their nodes.
func (s *Store) ListRollouts(ctx context.Context, limit int) ([]hq.Rollout, error) {
	rows, err := s.reader().RolloutList(ctx, int64(limit))
	if err != nil {
		return nil, err
	}
	return readRollouts(rows)
}

func readRollouts(rows []driver.Rollout) ([]hq.Rollout, error) {
	out := make([]hq.Rollout, len(rows))
	for i, r := range rows {
		v, err := readRollout(r)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// activeRollouts are the unfinished rollouts, for /status.
func activeRollouts(ctx context.Context, q driver.Queries) ([]hq.Rollout, error) {
	rows, err := q.RolloutListActive(ctx)
	if err != nil {
		return nil, err
	}
	return readRollouts(rows)
}

// nodeRollouts are the unfinished rollouts a node is in.
func nodeRollouts(ctx context.Context, q driver.Queries, node string) ([]hq.NodeRollout, error) {
	rows, err := q.RolloutOfNode(ctx, node)
	var out []hq.NodeRollout
	for _, r := range rows {
		out = append(out, hq.NodeRollout{ID: r.ID, Module: r.Module, FromRevision: r.FromRevision, ToRevision: r.ToRevision,
			State: hq.RolloutState(r.State), NodeState: r.NodeState, Wave: int(r.Wave), Reason: r.Reason})
	}
	return out, err
}
