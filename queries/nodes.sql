-- name: NodeInsert :exec
INSERT INTO nodes (name, token_hash, created_at) VALUES (@name, @token_hash, @created_at);

-- name: NodeGet :one
SELECT * FROM nodes WHERE name = @name;

-- name: NodeList :many
SELECT * FROM nodes ORDER BY name;

-- name: NodeDelete :execrows
DELETE FROM nodes WHERE name = @name;

-- name: NodeBumpGeneration :one
UPDATE nodes SET generation = generation + 1 WHERE name = @name RETURNING generation;

-- name: NodeBumpGenerationByModule :many
UPDATE nodes SET generation = generation + 1
WHERE name IN (SELECT node FROM assignments WHERE module = @module)
RETURNING name, generation;

-- name: NodeGenerationList :many
SELECT name, generation FROM nodes;

-- name: NodeSetReported :exec
UPDATE nodes SET last_report_at = @last_report_at, last_report_id = @last_report_id WHERE name = @name;

-- name: NodeSetApplied :exec
UPDATE nodes
SET applied_generation = @applied_generation, applied_digest = @applied_digest, applied_at = @applied_at
WHERE name = @name;

-- name: NodeExistsByTokenHash :one
SELECT EXISTS (SELECT 1 FROM nodes WHERE token_hash = @token_hash) AS found;

-- name: NodeRaiseGeneration :execrows
-- Never lowers: a generation once handed out stays used.
UPDATE nodes SET generation = @generation WHERE name = @name AND generation < @generation;
