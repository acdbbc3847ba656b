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
SELECT * FROM reports WHERE node = @node ORDER BY id DESC LIMIT @max::bigint;

-- name: ReportListLatestByNodes :many
-- The newest report row of some nodes (a JSON array of names).
SELECT r.* FROM reports r JOIN nodes n ON n.last_report_id = r.id
WHERE n.name IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json));

-- name: ReportPruneWindowEnd :one
-- The last row of the next window of at most @batch rows after @after, oldest first, and its
-- time: retention walks the table in windows so no pass holds the writer for long. It is the
-- time the row was written (at), which grows with id; last_at, which repeats move, does not.
SELECT id, at FROM (SELECT id, at FROM reports WHERE id > @after ORDER BY id LIMIT @batch::bigint) AS w
ORDER BY id DESC LIMIT 1;

-- name: ReportPrune :execrows
-- Rows of the window (@after, @until] older than @cutoff, except each node's newest @keep.
DELETE FROM reports WHERE id IN (
    SELECT w.id FROM reports w
    -- Each node of the window once: the id from which its newest @keep+1 rows begin.
    JOIN (SELECT n.node AS node,
                 (SELECT k.id FROM reports k WHERE k.node = n.node ORDER BY k.id DESC LIMIT 1 OFFSET @keep::bigint) AS from_id
          FROM (SELECT DISTINCT d.node FROM reports d WHERE d.id > @after AND d.id <= @until) n) kept ON kept.node = w.node
    WHERE w.id > @after AND w.id <= @until AND w.last_at < @cutoff AND w.id < COALESCE(kept.from_id, 0)
);
