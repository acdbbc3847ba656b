-- name: ReportInsert :one
INSERT INTO reports (node, generation, digest, summary, outcome_digest, applied, failed, stuck, held,
                     grouped_pending, pending, started_at, finished_at, at, last_at)
VALUES (@node, @generation, @digest, @summary, @outcome_digest, @applied, @failed, @stuck, @held,
        @grouped_pending, @pending, @started_at, @finished_at, @at, @at)
RETURNING id;

-- name: ReportGet :one
SELECT * FROM reports WHERE id = @id;

-- name: ReportRepeat :exec
UPDATE reports SET repeats = repeats + 1, last_at = @last_at WHERE id = @id;

-- name: ReportStandingRows :many
-- Every node's report rows from the one current at @since on, by node and in the order they
-- were made: a row stands until the next of its node, which the caller pairs as it reads them.
-- Most nodes report the same outcome all day, so they have one row here. The nodes are taken
-- by name and each one's rows through reports_by_node, the order asked for, so SQLite sorts
-- nothing and reads no node's older rows.
SELECT r.node, r.at, r.last_at,
       CAST(CASE WHEN r.failed + r.stuck + r.held + r.grouped_pending + r.pending = 0 THEN 1 ELSE 0 END AS BIGINT) AS fine,
       CAST(COALESCE(n.deleted_at, '') AS TEXT) AS deleted_at
-- CROSS JOIN: SQLite takes the nodes first, and each node's rows by the index from there.
FROM nodes n CROSS JOIN reports r
WHERE (n.deleted_at IS NULL OR n.deleted_at > CAST(@since AS TEXT))
  AND r.node = n.name
  AND r.id >= COALESCE((SELECT k.id FROM reports k WHERE k.node = n.name AND k.at <= CAST(@since AS TEXT)
                        ORDER BY k.id DESC LIMIT 1), 0)
ORDER BY n.name, r.id;
