-- name: RolloutList :many
-- The newest rollouts first.
SELECT * FROM rollouts ORDER BY id DESC LIMIT @max::bigint;

-- name: RolloutNodePage :many
-- One page of a rollout's nodes by name, after @after: the primary key's order.
SELECT * FROM rollout_nodes WHERE rollout = @rollout AND node > @after ORDER BY node LIMIT @max::bigint;

-- name: RolloutNodeCounts :one
SELECT COUNT(*) AS nodes,
    COUNT(*) FILTER (WHERE state = 'pending') AS pending,
    COUNT(*) FILTER (WHERE state = 'in-flight') AS in_flight,
    COUNT(*) FILTER (WHERE state = 'done') AS done,
    COUNT(*) FILTER (WHERE state IN ('failed', 'reverted')) AS failed,
    COUNT(*) FILTER (WHERE state = 'in-flight' AND wave = 1) AS first_wave_in_flight,
    CAST(COALESCE(MAX(wave), 0) AS BIGINT) AS last_wave
FROM rollout_nodes WHERE rollout = @rollout;

-- name: RolloutNodeListPending :many
SELECT node, from_revision FROM rollout_nodes
WHERE rollout = @rollout AND state = 'pending' ORDER BY node LIMIT @max::bigint;

-- name: RolloutNodeListFailed :many
SELECT node, from_revision FROM rollout_nodes
WHERE rollout = @rollout AND state = 'failed' ORDER BY node LIMIT @max::bigint;

-- name: RolloutNodeListAdvanced :many
-- The nodes an abort pins back: every one declared the new revision.
SELECT node, from_revision FROM rollout_nodes
WHERE rollout = @rollout AND state IN ('in-flight', 'done', 'failed') ORDER BY node LIMIT @max::bigint;

-- name: RolloutNodeAdvance :exec
-- The nodes named (a JSON array) declared the new revision, at their generation now.
UPDATE rollout_nodes SET state = 'in-flight', wave = @wave, started_at = @now,
    generation = (SELECT n.generation FROM nodes n WHERE n.name = rollout_nodes.node)
WHERE rollout = @rollout AND node IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json));

-- name: RolloutNodeRevert :exec
-- The nodes named (a JSON array) pinned back to the revision they had.
UPDATE rollout_nodes SET state = 'reverted', ended_at = COALESCE(ended_at, @now),
    reason = CASE WHEN reason = '' OR reason = 'converged' THEN @reason ELSE reason || '; ' || @reason END
WHERE rollout = @rollout AND node IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json));

-- name: RolloutNodeInsertOnNodes :exec
-- Nodes that joined the placement during the rollout (a JSON array), pending at @from_revision.
INSERT INTO rollout_nodes (rollout, node, from_revision)
SELECT @rollout, value, @from_revision FROM json_array_elements_text(CAST(@nodes AS text)::json) WHERE true
ON CONFLICT (rollout, node) DO UPDATE SET state = 'pending', wave = 0, from_revision = excluded.from_revision,
    generation = 0, reason = '', started_at = NULL, ended_at = NULL;

-- name: RolloutLatestOfPlacements :many
-- The newest rollout of each placement named (a JSON array).
SELECT * FROM rollouts
WHERE id IN (SELECT MAX(x.id) FROM rollouts x
             WHERE x.placement IN (SELECT value FROM json_array_elements_text(CAST(@placements AS text)::json))
             GROUP BY x.placement)
ORDER BY placement;
