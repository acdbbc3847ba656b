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
		if err != nil || n == 1 {
			return err
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

// rolloutNotIn explains why a guarded change of a rollout's state found no row.
func rolloutNotIn(ctx context.Context, q driver.Queries, id int64, want string) error {
	r, err := q.RolloutGet(ctx, id)
	if err != nil {
		return notFound(err, "no rollout %d", id)
	}
	return hq.Errorf(hq.CodeConflict, "rollout %d is %s, not %s", id, r.State, want)
}

