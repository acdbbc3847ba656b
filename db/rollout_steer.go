package db

import (
	"context"

	"github.com/meshhq/hq"
	"github.com/meshhq/hq/db/driver"
)

// An operator steers a rollout: pause, resume, promote, abort. Each is one guarded change of
// the rollout's row, in one transaction; a rollout in a state the change does not start from
// is a conflict that changes nothing.

// ResumeRollout sets a paused rollout progressing again; the failures so far no longer count
// against its budget. Anything but paused is a conflict.
func (s *Store) ResumeRollout(ctx context.Context, id int64) (hq.Rollout, error) {
	err := s.inTx(ctx, func(q driver.Queries) error {
		n, err := q.RolloutResume(ctx, driver.RolloutResumeParams{ID: id, Reason: "resumed by an operator", Now: s.now()})
		if err != nil {
			return err
		}
		if n == 1 {
			return steered(ctx, q, id, "resumed")
		}
		return rolloutNotIn(ctx, q, id, "paused")
	})
	if err != nil {
		return hq.Rollout{}, err
	}
	s.rolloutsActive.Store(true)
	s.WakeRollouts()
	return s.GetRollout(ctx, id)
}

// AbortRollout ends a rollout aborted and pins every node it advanced back to the revision it
// had, a chunk per transaction. Anything but progressing or paused is a conflict.
func (s *Store) AbortRollout(ctx context.Context, id int64) (hq.Rollout, error) {
	first := true
	for {
		var gens map[string]int64
		more := false
		err := s.inTx(ctx, func(q driver.Queries) error {
			if first {
				n, err := q.RolloutAbort(ctx, driver.RolloutAbortParams{ID: id, Reason: "aborted by an operator", Now: s.now()})
				if err != nil {
					return err
				}
				if n == 0 {
					return rolloutNotIn(ctx, q, id, "progressing or paused")
				}
				if err := steered(ctx, q, id, "aborted"); err != nil {
					return err
				}
			}
			r, err := q.RolloutGet(ctx, id)
			if err != nil {
				return err
			}
			chunk, err := s.rolloutChunk(ctx, q, r)
			if err != nil {
				return err
			}
			advanced, err := q.RolloutNodeListAdvanced(ctx, driver.RolloutNodeListParams{Rollout: id, Max: int64(chunk) + 1})
			if err != nil {
				return err
			}
			more = len(advanced) > chunk
			gens, err = s.revertNodes(ctx, q, r, advanced[:min(len(advanced), chunk)], "pinned back to its revision: rollout aborted")
			if err != nil {
				return err
			}
			return setRolloutCounts(ctx, q, id)
		})
		if err != nil {
			return hq.Rollout{}, err
		}
		first = false
		s.ringAll(gens)
		if !more {
			return s.GetRollout(ctx, id)
		}
	}
}

// steered records who steered rollout id, and how, in the steering's own transaction.
func steered(ctx context.Context, q driver.Queries, id int64, how string) error {
	return q.RolloutSetSteered(ctx, driver.RolloutSetSteeredParams{By: hq.Author(ctx), How: how, ID: id})
}

// rolloutNotIn explains why a guarded change of a rollout's state found no row.
func rolloutNotIn(ctx context.Context, q driver.Queries, id int64, want string) error {
	r, err := q.RolloutGet(ctx, id)
	if err != nil {
		return notFound(err, "no rollout %d", id)
	}
	return hq.Errorf(hq.CodeConflict, "rollout %d is %s, not %s", id, r.State, want)
}

// reasonOperatorPaused is the reason of a pause an operator made; the rollout loop words a
// pause of its own from what failed, and leaves this one as it is.
const reasonOperatorPaused = "paused by an operator"

// PauseRollout pauses a progressing rollout: the rollout loop starts no new wave, and the nodes
// in flight go on and are still marked done or failed. Anything but progressing is a conflict.
func (s *Store) PauseRollout(ctx context.Context, id int64) (hq.Rollout, error) {
	err := s.inTx(ctx, func(q driver.Queries) error {
		n, err := q.RolloutPause(ctx, driver.RolloutPauseParams{ID: id, Reason: reasonOperatorPaused, Now: s.now()})
		if err != nil {
			return err
		}
		if n == 1 {
			return steered(ctx, q, id, "paused")
		}
		return rolloutNotIn(ctx, q, id, "progressing")
	})
	if err != nil {
		return hq.Rollout{}, err
	}
	return s.GetRollout(ctx, id)
}

// PromoteRollout takes a progressing rollout's canaries as proven: the batches start at once,
// without waiting for the canaries to converge (max_unavailable still bounds the nodes in flight,
// the canaries among them). A canary's failure still counts against the budget. A rollout
// without canaries has nothing to promote; anything but progressing is a conflict.
func (s *Store) PromoteRollout(ctx context.Context, id int64) (hq.Rollout, error) {
	err := s.inTx(ctx, func(q driver.Queries) error {
		r, err := q.RolloutGet(ctx, id)
		if err != nil {
			return notFound(err, "no rollout %d", id)
		}
		if hq.RolloutState(r.State) != hq.RolloutProgressing {
			return hq.Errorf(hq.CodeConflict, "rollout %d is %s, not progressing: only a progressing rollout is promoted", id, r.State)
		}
		pol, err := rolloutPolicy(r.Policy)
		if err != nil {
			return err
		}
		if pol.Canary == 0 {
			return hq.Errorf(hq.CodeConflict, "rollout %d has no canary wave to promote: its policy has canary 0", id)
		}
		n, err := q.RolloutPromote(ctx, driver.RolloutPromoteParams{ID: id, Reason: "promoted by an operator: the canaries count as proven", Now: s.now()})
		if err != nil {
			return err
		}
		if n == 1 {
			return steered(ctx, q, id, "promoted")
		}
		return rolloutNotIn(ctx, q, id, "progressing")
	})
	if err != nil {
		return hq.Rollout{}, err
	}
	s.WakeRollouts()
	return s.GetRollout(ctx, id)
}
