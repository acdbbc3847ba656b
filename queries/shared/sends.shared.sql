-- name: SendInsert :one
INSERT INTO sends (node, generation, digest, resources, composed_by, sent_at, signature)
VALUES (@node, @generation, @digest, @resources, @composed_by, @sent_at, @signature)
RETURNING id;

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

-- name: SendCountByOutcome :many
-- Every recorded send (as retention keeps them) by outcome, for /metrics.
SELECT outcome, COUNT(*) AS sends FROM sends GROUP BY outcome ORDER BY outcome;
