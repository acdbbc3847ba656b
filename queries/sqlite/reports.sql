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
