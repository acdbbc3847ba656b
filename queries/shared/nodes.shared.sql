-- name: NodeInsert :exec
INSERT INTO nodes (name, token_hash, created_at) VALUES (@name, @token_hash, @created_at);

-- name: NodeGet :one
-- A registered node; a deleted one is not found.
SELECT * FROM nodes WHERE name = @name AND deleted_at IS NULL;

-- name: NodeTokenCheck :one
-- What a node's long-poll is checked against, and the generation it waits on: one read for both.
SELECT token_hash, generation FROM nodes WHERE name = @name AND deleted_at IS NULL;

-- name: NodeGeneration :one
SELECT generation FROM nodes WHERE name = @name AND deleted_at IS NULL;

-- name: NodeGetAny :one
-- A node registered now or deleted: its history is still there.
SELECT * FROM nodes WHERE name = @name;

-- name: NodeMarkDeleted :exec
-- The token is replaced by one nobody holds, so the old token stops working.
UPDATE nodes SET deleted_at = @deleted_at, token_hash = @void_token_hash WHERE name = @name AND deleted_at IS NULL;

-- name: NodeRegisterAgain :exec
-- A deleted name registered again: a new token, and a generation above every one it had.
UPDATE nodes
SET deleted_at = NULL, token_hash = @token_hash, created_at = @created_at, generation = generation + 1,
    last_report_at = NULL, last_report_id = NULL, applied_generation = 0, applied_digest = '', applied_at = NULL
WHERE name = @name AND deleted_at IS NOT NULL;

-- name: NodeRegistrationInsert :exec
INSERT INTO node_registrations (node, registered_at, first_generation) VALUES (@node, @registered_at, @first_generation);

-- name: NodeRegistrationEnd :exec
UPDATE node_registrations SET deleted_at = @deleted_at, last_generation = @last_generation
WHERE node = @node AND deleted_at IS NULL;

-- name: NodeBumpGeneration :one
UPDATE nodes SET generation = generation + 1 WHERE name = @name RETURNING generation;

-- name: NodeGenerationList :many
SELECT name, generation FROM nodes WHERE deleted_at IS NULL;

-- name: NodeSetReported :exec
UPDATE nodes SET last_report_at = @last_report_at, last_report_id = @last_report_id WHERE name = @name;

-- name: NodeSetHost :exec
-- What the host says of itself, in the reports that carry it.
UPDATE nodes SET hostd_version = @hostd_version, os = @os, arch = @arch, booted_at = @booted_at WHERE name = @name;

-- name: NodeSetApplied :exec
UPDATE nodes
SET applied_generation = @applied_generation, applied_digest = @applied_digest, applied_at = @applied_at
WHERE name = @name;

-- name: NodeExistsByTokenHash :one
SELECT EXISTS (SELECT 1 FROM nodes WHERE token_hash = @token_hash) AS found;

-- name: NodeRaiseGeneration :execrows
-- Never lowers: a generation once handed out stays used.
UPDATE nodes SET generation = @generation WHERE name = @name AND generation < @generation;

-- name: NodeStatusList :many
-- What every registered node's status is computed from, and its labels for selectors, and
-- nothing more: the status of a fleet is read from this.
SELECT name, generation, applied_generation, last_report_at,
       resources_applied, resources_pending, resources_failed, resources_stuck, resources_held, resources_grouped_pending,
       labels
FROM nodes WHERE deleted_at IS NULL ORDER BY name;

-- name: NodeStatusCounts :many
-- Every registered node counted by its status, and its resources by state summed, without
-- reading the rows one by one. The CASE is hq.StatusOf on a node's row (a test holds the two
-- to each other); @silent_before is the time a report older than makes a node silent.
SELECT CAST(CASE
           WHEN last_report_at IS NULL THEN 'new'
           WHEN last_report_at < CAST(@silent_before AS TEXT) THEN 'silent'
           WHEN resources_stuck > 0 THEN 'stuck'
           WHEN resources_held > 0 THEN 'waiting-on-take'
           WHEN applied_generation <> generation OR resources_pending + resources_grouped_pending > 0 THEN 'mid-change'
           WHEN resources_failed > 0 THEN 'degraded'
           ELSE 'converged'
       END AS TEXT) AS status,
       COUNT(*) AS nodes,
       CAST(SUM(resources_applied) AS BIGINT) AS applied,
       CAST(SUM(resources_pending) AS BIGINT) AS pending,
       CAST(SUM(resources_failed) AS BIGINT) AS failed,
       CAST(SUM(resources_stuck) AS BIGINT) AS stuck,
       CAST(SUM(resources_held) AS BIGINT) AS held,
       CAST(SUM(resources_grouped_pending) AS BIGINT) AS grouped_pending
FROM nodes WHERE deleted_at IS NULL
GROUP BY 1;

-- name: NodeNamesByStatus :many
-- A page of the registered nodes in a status without reading every node's row: their names
-- after @after in name order, at most @max of them, in @status (any when empty) and, with
-- @not_converged, in any but converged. The CASE is NodeStatusCounts's, and the same test
-- holds it to hq.StatusOf.
SELECT name FROM (
    SELECT name,
           CASE
               WHEN last_report_at IS NULL THEN 'new'
               WHEN last_report_at < CAST(@silent_before AS TEXT) THEN 'silent'
               WHEN resources_stuck > 0 THEN 'stuck'
               WHEN resources_held > 0 THEN 'waiting-on-take'
               WHEN applied_generation <> generation OR resources_pending + resources_grouped_pending > 0 THEN 'mid-change'
               WHEN resources_failed > 0 THEN 'degraded'
               ELSE 'converged'
           END AS status
    FROM nodes WHERE deleted_at IS NULL AND name > CAST(@after AS TEXT)
) AS listed
WHERE (CAST(@status AS TEXT) = '' OR status = CAST(@status AS TEXT))
  AND (CAST(@not_converged AS BIGINT) = 0 OR status <> 'converged')
ORDER BY name
LIMIT CAST(@max AS BIGINT);

-- name: NodeNamesBySeverity :many
-- A page of the registered nodes by how much each needs a look (hq.BySeverity), then by name:
-- those after (@after_severity, @after), at most @max, filtered as NodeNamesByStatus. The severity
-- hangs on the time (silent), so no index holds it: each page scans the nodes' rows, one
-- narrow row per node, and keeps the first @max in a bounded sort. The status CASE is
-- NodeStatusCounts's; the severity CASE is hq.Severity, a test holding both to Go.
SELECT name, CAST(status AS TEXT) AS status, CAST(severity AS BIGINT) AS severity FROM (
    SELECT name, status,
           CASE status
               WHEN 'stuck' THEN 0
               WHEN 'degraded' THEN 1
               WHEN 'mid-change' THEN 2
               WHEN 'silent' THEN 3
               WHEN 'waiting-on-take' THEN 4
               WHEN 'new' THEN 5
               ELSE 6
           END AS severity
    FROM (
        SELECT name,
               CASE
                   WHEN last_report_at IS NULL THEN 'new'
                   WHEN last_report_at < CAST(@silent_before AS TEXT) THEN 'silent'
                   WHEN resources_stuck > 0 THEN 'stuck'
                   WHEN resources_held > 0 THEN 'waiting-on-take'
                   WHEN applied_generation <> generation OR resources_pending + resources_grouped_pending > 0 THEN 'mid-change'
                   WHEN resources_failed > 0 THEN 'degraded'
                   ELSE 'converged'
               END AS status
        FROM nodes WHERE deleted_at IS NULL
    ) AS named
    WHERE (CAST(@status AS TEXT) = '' OR status = CAST(@status AS TEXT))
      AND (CAST(@not_converged AS BIGINT) = 0 OR status <> 'converged')
) AS ranked
WHERE severity > CAST(@after_severity AS BIGINT) OR (severity = CAST(@after_severity AS BIGINT) AND name > CAST(@after AS TEXT))
ORDER BY severity, name
LIMIT CAST(@max AS BIGINT);

-- name: NodeSetLabels :exec
UPDATE nodes SET labels = @labels WHERE name = @name;

-- name: NodeSetVars :exec
UPDATE nodes SET vars = @vars WHERE name = @name;

-- name: NodeLabelList :many
-- Every registered node's labels, which selectors are matched against.
SELECT name, labels FROM nodes WHERE deleted_at IS NULL ORDER BY name;
