-- name: SendInsert :one
INSERT INTO sends (node, generation, digest, resources, composed_by, sent_at, signature)
VALUES (@node, @generation, @digest, @resources, @composed_by, @sent_at, @signature)
RETURNING id;

-- name: SendListByNode :many
SELECT * FROM sends WHERE node = @node ORDER BY id DESC LIMIT @max;

-- name: SendMarkApplied :exec
-- The sends of what a host reports it applied.
UPDATE sends SET outcome = 'applied', outcome_at = @at
WHERE node = @node AND generation = @generation AND digest = @digest AND outcome = 'sent';

-- name: SendMarkSuperseded :exec
-- Unanswered older sends a host will never apply now that it applied a newer generation.
UPDATE sends SET outcome = 'superseded', outcome_at = @at
WHERE node = @node AND generation < @generation AND outcome = 'sent';

-- name: SendMarkRefused :execrows
-- Only an unanswered send: one already applied that comes back is a replay, with a row of its own.
UPDATE sends SET outcome = 'refused', outcome_at = @at, reason = @reason
WHERE node = @node AND id = @id AND outcome = 'sent';

-- name: SendGet :one
SELECT * FROM sends WHERE node = @node AND id = @id;

-- name: SendRefusedExists :one
SELECT EXISTS (SELECT 1 FROM sends WHERE node = @node AND generation = @generation AND digest = @digest AND outcome = 'refused') AS found;

-- name: SendListRefused :many
-- Refused sends that nothing applied since has answered, on every node.
SELECT s.* FROM sends s JOIN nodes n ON n.name = s.node
WHERE s.outcome = 'refused' AND n.deleted_at IS NULL AND (n.applied_at IS NULL OR s.outcome_at >= n.applied_at)
ORDER BY s.node, s.id DESC;

-- name: SendInsertRefused :one
-- A refused declaration with no unanswered send: replayed, forged or from a lost database.
INSERT INTO sends (node, generation, digest, resources, composed_by, sent_at, outcome, outcome_at, reason)
VALUES (@node, @generation, @digest, @resources, @composed_by, @sent_at, 'refused', @at, @reason)
RETURNING id;

-- name: SendListRefusedByNodes :many
-- The same, for some nodes (a JSON array of names).
SELECT s.* FROM sends s JOIN nodes n ON n.name = s.node
WHERE s.node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT))) AND s.outcome = 'refused'
  AND (n.applied_at IS NULL OR s.outcome_at >= n.applied_at)
ORDER BY s.node, s.id DESC;

-- name: SendPruneWindowEnd :one
-- The last row of the next window of at most @batch rows after @after, oldest first, and its
-- time: retention walks the table in windows so no pass holds the writer for long.
SELECT id, sent_at AS at FROM (SELECT id, sent_at FROM sends WHERE id > @after ORDER BY id LIMIT @batch)
ORDER BY id DESC LIMIT 1;

-- name: SendPrune :execrows
-- A send is as old as its last news (its outcome, or when it was sent).
-- Rows of the window (@after, @until] older than @cutoff, except each node's newest @keep.
DELETE FROM sends WHERE id IN (
    SELECT w.id FROM sends w
    -- Each node of the window once: the id from which its newest @keep+1 rows begin.
    JOIN (SELECT n.node AS node,
                 (SELECT k.id FROM sends k WHERE k.node = n.node ORDER BY k.id DESC LIMIT 1 OFFSET @keep) AS from_id
          FROM (SELECT DISTINCT d.node FROM sends d WHERE d.id > @after AND d.id <= @until) n) kept ON kept.node = w.node
    WHERE w.id > @after AND w.id <= @until AND COALESCE(w.outcome_at, w.sent_at) < @cutoff AND w.id < COALESCE(kept.from_id, 0)
);

-- name: SendCountByOutcome :many
-- Every recorded send (as retention keeps them) by outcome, for /metrics.
SELECT outcome, COUNT(*) AS sends FROM sends GROUP BY outcome ORDER BY outcome;
