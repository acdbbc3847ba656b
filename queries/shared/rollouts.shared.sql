-- name: RolloutInsert :one
INSERT INTO rollouts (module, placement, from_revision, from_revisions, to_revision, rollback_of, policy, reason, created_at, updated_at)
VALUES (@module, @placement, @from_revision, @from_revisions, @to_revision, @rollback_of, @policy, @reason, @now, @now)
RETURNING id;

-- name: RolloutInsertPlanned :one
-- A dry run's rollout, at an id of its own (negative, never committed): it draws no id a
-- real rollout would have.
INSERT INTO rollouts (id, module, placement, from_revision, from_revisions, to_revision, rollback_of, policy, reason, created_at, updated_at)
VALUES (@id, @module, @placement, @from_revision, @from_revisions, @to_revision, @rollback_of, @policy, @reason, @now, @now)
RETURNING id;

-- name: RolloutGet :one
SELECT * FROM rollouts WHERE id = @id;

-- name: RolloutListActive :many
SELECT * FROM rollouts WHERE state IN ('progressing', 'paused') ORDER BY id;

-- name: RolloutCountByState :many
-- How many rollouts are in each state (the metrics' hq_rollouts).
SELECT state, COUNT(*) AS rollouts FROM rollouts GROUP BY state ORDER BY state;

-- name: RolloutListActiveOfPlacement :many
SELECT id FROM rollouts
WHERE placement = @placement AND module = @module AND state IN ('progressing', 'paused') ORDER BY id;

-- name: RolloutPause :execrows
UPDATE rollouts SET state = 'paused', reason = @reason, updated_at = @now
WHERE id = @id AND state = 'progressing';

-- name: RolloutPromote :execrows
-- The canaries count as proven: the batches start without waiting for them.
UPDATE rollouts SET promoted = 1, reason = @reason, updated_at = @now
WHERE id = @id AND state = 'progressing';

-- name: RolloutSetPausedReason :exec
-- A paused rollout's reason, as what failed where changes while it is paused.
UPDATE rollouts SET reason = @reason, updated_at = @now WHERE id = @id AND state = 'paused';

-- name: RolloutResume :execrows
-- The failures so far are set aside: the budget counts those after the resume.
UPDATE rollouts SET state = 'progressing', reason = @reason, updated_at = @now, forgiven = failed
WHERE id = @id AND state = 'paused';

-- name: RolloutComplete :execrows
UPDATE rollouts SET state = 'complete', reason = @reason, updated_at = @now, ended_at = @now
WHERE id = @id AND state = 'progressing';

-- name: RolloutAbort :execrows
UPDATE rollouts SET state = 'aborted', reason = @reason, updated_at = @now, ended_at = @now
WHERE id = @id AND state IN ('progressing', 'paused');

-- name: RolloutSetCounts :exec
UPDATE rollouts SET nodes = @nodes, done = @done, in_flight = @in_flight, failed = @failed
WHERE id = @id;

-- name: RolloutNodeInsertFromPlacement :execrows
-- Every node of a placement whose pin is not the rollout's revision, at the pin it has: behind
-- it for a new revision, past it for a rollback.
INSERT INTO rollout_nodes (rollout, node, from_revision)
SELECT @rollout, a.node, a.revision FROM assignments a
WHERE a.source = @placement AND a.module = @module AND a.revision <> @to_revision;

-- name: RolloutNodeList :many
SELECT * FROM rollout_nodes WHERE rollout = @rollout ORDER BY wave = 0, wave, node;

-- name: RolloutWaveList :many
-- A rollout's nodes counted by wave and state, with when the first of them started and the
-- last ended ('' for none); nodes not started yet count in wave 0, whatever wave they have.
SELECT CAST(CASE WHEN started_at IS NULL THEN 0 ELSE wave END AS BIGINT) AS wave, state, COUNT(*) AS nodes,
       CAST(COALESCE(MIN(started_at), '') AS TEXT) AS first_started, CAST(COALESCE(MAX(ended_at), '') AS TEXT) AS last_ended
FROM rollout_nodes WHERE rollout = @rollout
GROUP BY CASE WHEN started_at IS NULL THEN 0 ELSE wave END, state
ORDER BY 1, 2;

-- name: RolloutNodeMarkDone :execrows
-- In-flight nodes that applied the generation declaring the new revision with every resource
-- of the module applied.
UPDATE rollout_nodes SET state = 'done', ended_at = @now, reason = 'converged'
WHERE rollout = @rollout AND state = 'in-flight'
  AND EXISTS (SELECT 1 FROM nodes n WHERE n.name = rollout_nodes.node AND n.applied_generation >= rollout_nodes.generation)
  AND NOT EXISTS (SELECT 1 FROM resource_states r
                  WHERE r.node = rollout_nodes.node AND r.module = @module AND r.state <> 'applied');

-- name: RolloutNodeMarkFailed :execrows
-- In-flight nodes with a resource of the module stuck, held, or failed on its last allowed
-- attempt (@last_attempt consecutive failures), or not converged since @deadline.
UPDATE rollout_nodes SET state = 'failed', ended_at = @now,
    reason = COALESCE((SELECT r.module || '/' || r.resource || ' ' || r.state FROM resource_states r
                       WHERE r.node = rollout_nodes.node AND r.state NOT IN ('applied', 'pending') AND r.module = @module
                         AND (r.state IN ('stuck', 'held') OR (r.state = 'failed' AND r.consecutive_failures >= @last_attempt))
                       ORDER BY r.resource LIMIT 1), @late_reason)
WHERE rollout = @rollout AND state = 'in-flight'
  AND (started_at < @deadline
       OR EXISTS (SELECT 1 FROM resource_states r
                  WHERE r.node = rollout_nodes.node AND r.state NOT IN ('applied', 'pending') AND r.module = @module
                    AND (r.state IN ('stuck', 'held') OR (r.state = 'failed' AND r.consecutive_failures >= @last_attempt))));

-- name: RolloutLatestOfPlacement :many
-- The newest rollout of a placement's module, if any.
SELECT * FROM rollouts WHERE placement = @placement AND module = @module ORDER BY id DESC LIMIT 1;

-- name: RolloutNodeListFailedReasons :many
SELECT node, reason FROM rollout_nodes
WHERE rollout = @rollout AND state IN ('failed', 'reverted') ORDER BY reason, node;

-- name: RolloutOfNode :many
-- The unfinished rollouts a node is in, with its progress in each.
SELECT r.id, r.module, r.from_revision, r.to_revision, r.state, rn.state AS node_state, rn.wave, rn.reason
FROM rollout_nodes rn JOIN rollouts r ON r.id = rn.rollout
WHERE rn.node = @node AND r.state IN ('progressing', 'paused')
ORDER BY r.id;

-- name: RolloutNodeDeleteGone :execrows
-- Nodes that left the placement (relabelled, unassigned or deleted) before they were done
-- leave the rollout: there is nothing of the module left to roll out to them.
DELETE FROM rollout_nodes
WHERE rollout = @rollout AND state IN ('pending', 'in-flight')
  AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.node = rollout_nodes.node AND a.module = @module);

-- name: RolloutListPage :many
-- A page of rollouts, newest first: those older than @before (an id; 0 for the first page)
-- in @state, of @module and of @placement, each only when it is not empty.
SELECT * FROM rollouts
WHERE (CAST(@before AS BIGINT) = 0 OR id < CAST(@before AS BIGINT))
  AND (CAST(@state AS TEXT) = '' OR state = CAST(@state AS TEXT))
  AND (CAST(@module AS TEXT) = '' OR module = CAST(@module AS TEXT))
  AND (CAST(@placement AS TEXT) = '' OR placement = CAST(@placement AS TEXT))
ORDER BY id DESC
LIMIT CAST(@max AS BIGINT);

-- name: RolloutTransitionList :many
-- A rollout's history, oldest first: every change of its state, as the triggers wrote it.
SELECT id, from_state, to_state, reason, at FROM rollout_transitions
WHERE rollout = @rollout ORDER BY id LIMIT CAST(@max AS BIGINT);

-- name: RolloutSetSteered :exec
UPDATE rollouts SET steered_by = @by, steered = @how WHERE id = @id;
