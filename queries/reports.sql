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

-- name: ReportListByNode :many
SELECT * FROM reports WHERE node = @node ORDER BY id DESC LIMIT @max;

-- name: ReportListLatestByNodes :many
-- The newest report row of some nodes (a JSON array of names).
SELECT r.* FROM reports r JOIN nodes n ON n.last_report_id = r.id
WHERE n.name IN (SELECT value FROM json_each(CAST(@nodes AS TEXT)));

-- name: ReportPruneWindowEnd :one
-- The last row of the next window of at most @batch rows after @after, oldest first, and its
-- time: retention walks the table in windows so no pass holds the writer for long. It is the
-- time the row was written (at), which grows with id; last_at, which repeats move, does not.
SELECT id, at FROM (SELECT id, at FROM reports WHERE id > @after ORDER BY id LIMIT @batch)
ORDER BY id DESC LIMIT 1;

-- name: ReportPrune :execrows
-- Rows of the window (@after, @until] older than @cutoff, except each node's newest @keep.
DELETE FROM reports WHERE id IN (
    SELECT w.id FROM reports w
    -- Each node of the window once: the id from which its newest @keep+1 rows begin.
    JOIN (SELECT n.node AS node,
                 (SELECT k.id FROM reports k WHERE k.node = n.node ORDER BY k.id DESC LIMIT 1 OFFSET @keep) AS from_id
          FROM (SELECT DISTINCT d.node FROM reports d WHERE d.id > @after AND d.id <= @until) n) kept ON kept.node = w.node
    WHERE w.id > @after AND w.id <= @until AND w.last_at < @cutoff AND w.id < COALESCE(kept.from_id, 0)
);

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

-- name: ReportSteadyContext :one
-- What a steady report is checked against, in one read (db/steady.go): the node, its last
-- report, whether the report's send is one recorded for it, whether sends of that declaration
-- wait to be marked applied, and whether the node has stuck resources or retries asked.
SELECT n.token_hash, n.generation, n.applied_generation, n.applied_digest,
       r.id AS report_id, r.summary, r.outcome_digest,
       EXISTS (SELECT 1 FROM sends s WHERE s.node = n.name AND s.id = @send_id AND s.generation = @generation
               AND s.digest = @digest AND s.outcome <> 'refused' AND (s.signature = '' OR s.signature = @signature)
               AND @results <= s.resources) AS send_known,
       EXISTS (SELECT 1 FROM sends s WHERE s.node = n.name AND s.generation = @generation AND s.digest = @digest
               AND s.outcome = 'sent') AS send_unanswered,
       EXISTS (SELECT 1 FROM resource_states rs WHERE rs.node = n.name AND rs.state = 'stuck'
               AND rs.state NOT IN ('applied', 'pending')) AS any_stuck,
       EXISTS (SELECT 1 FROM resource_states rs WHERE rs.node = n.name AND rs.retry_requested = 1) AS any_retry
FROM nodes n JOIN reports r ON r.id = n.last_report_id
WHERE n.name = @node AND n.deleted_at IS NULL;
