-- +goose Up
-- What an operator's steering of a rollout keeps, and where a rollout really starts from.
-- from_revisions: every revision the rollout's nodes moved from, a JSON array in ascending
-- order ('' for a rollout from before this column: from_revision alone). from_revision is the
-- lowest of them.
-- promoted: 1 once an operator promoted the rollout: its canaries count as proven and the
-- batches start without waiting for them.
-- rollback_of: for a rollback of a placement to an earlier revision, the module's newest
-- revision when the rollback started; 0 for a rollout of a new revision. While the module's
-- newest revision is still that one, the mover leaves the placement's pins to the rollback.
ALTER TABLE rollouts ADD COLUMN from_revisions TEXT NOT NULL DEFAULT '';
ALTER TABLE rollouts ADD COLUMN promoted INTEGER NOT NULL DEFAULT 0 CHECK (promoted IN (0, 1));
ALTER TABLE rollouts ADD COLUMN rollback_of INTEGER NOT NULL DEFAULT 0;
CREATE INDEX rollouts_rollbacks ON rollouts (placement, module, rollback_of) WHERE rollback_of > 0;

-- +goose Down
DROP INDEX rollouts_rollbacks;
ALTER TABLE rollouts DROP COLUMN rollback_of;
ALTER TABLE rollouts DROP COLUMN promoted;
ALTER TABLE rollouts DROP COLUMN from_revisions;
