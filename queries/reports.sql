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

-- name: ReportConvergedAt :many
-- How many nodes were converged, and how many were not, at each of @moments moments @step_ms
-- apart from @since (@since_ms in milliseconds), by the report row current on each node then.
-- A row stands from its time until the node's next row; it is converged while every resource
-- in it was applied and the node was not silent (@silent_ms after the row's last repeat), else
-- not converged. A node counts from its first report until it is deleted. Set-based: each row
-- becomes the edges of the moments it covers, and the counts are the running sums of the
-- edges. Each node's rows are read through reports_by_node from the one current at @since: the
-- window's few changes of outcome, not the table. The window function (LEAD) also keeps SQLite
-- from folding spans into each branch that reads it, where it would work each row out again.
WITH RECURSIVE moment (i) AS (
    SELECT 0 UNION ALL SELECT i + 1 FROM moment WHERE i + 1 < CAST(@moments AS BIGINT)
),
starts AS (
    SELECT n.name, n.deleted_at,
           COALESCE((SELECT k.id FROM reports k WHERE k.node = n.name AND k.at <= CAST(@since AS TEXT)
                     ORDER BY k.id DESC LIMIT 1), 0) AS from_id
    FROM nodes n
    WHERE n.deleted_at IS NULL OR n.deleted_at > CAST(@since AS TEXT)
),
-- Each row in milliseconds: its time, its next row's, the node's deletion, and when the node
-- fell silent after it; and whether every resource in it was applied.
spans AS (
    SELECT CAST(ROUND((julianday(r.at) - 2440587.5) * 86400000.0) AS INTEGER) AS a,
           CAST(ROUND((julianday(LEAD(r.at) OVER (PARTITION BY r.node ORDER BY r.id)) - 2440587.5) * 86400000.0) AS INTEGER) AS next,
           CAST(ROUND((julianday(st.deleted_at) - 2440587.5) * 86400000.0) AS INTEGER) AS gone,
           CAST(ROUND((julianday(r.last_at) - 2440587.5) * 86400000.0) AS INTEGER) + CAST(@silent_ms AS BIGINT) + 1 AS quiet,
           CASE WHEN r.failed + r.stuck + r.held + r.grouped_pending + r.pending = 0 THEN 1 ELSE 0 END AS fine
    -- CROSS JOIN: SQLite takes the nodes first, and each node's rows by the index from there.
    FROM starts st CROSS JOIN reports r
    WHERE r.node = st.name AND r.id >= st.from_id
),
-- Each row stands from a to b; it is converged from a to c, and not from c to b.
ranges AS (
    SELECT a, b, CASE WHEN fine = 0 THEN a WHEN quiet < b THEN quiet ELSE b END AS c
    FROM (SELECT a, MIN(COALESCE(next, 9007199254740991), COALESCE(gone, 9007199254740991)) AS b, quiet, fine FROM spans) AS s
),
-- The first moment at or after each edge, as an index; @moments is past the last.
edges AS (
    SELECT CASE WHEN a <= CAST(@since_ms AS BIGINT) THEN 0 ELSE (a - CAST(@since_ms AS BIGINT) + CAST(@step_ms AS BIGINT) - 1) / CAST(@step_ms AS BIGINT) END AS ia,
           CASE WHEN b <= CAST(@since_ms AS BIGINT) THEN 0 ELSE (b - CAST(@since_ms AS BIGINT) + CAST(@step_ms AS BIGINT) - 1) / CAST(@step_ms AS BIGINT) END AS ib,
           CASE WHEN c <= CAST(@since_ms AS BIGINT) THEN 0 ELSE (c - CAST(@since_ms AS BIGINT) + CAST(@step_ms AS BIGINT) - 1) / CAST(@step_ms AS BIGINT) END AS ic
    FROM ranges
),
deltas AS (
    SELECT i, SUM(dc) AS dc, SUM(dn) AS dn FROM (
        SELECT ia AS i, 1 AS dc, 0 AS dn FROM edges WHERE ia < ic
        UNION ALL SELECT ic, -1, 0 FROM edges WHERE ia < ic
        UNION ALL SELECT ic, 0, 1 FROM edges WHERE ic < ib
        UNION ALL SELECT ib, 0, -1 FROM edges WHERE ic < ib
    ) AS e
    GROUP BY i
)
SELECT CAST(m.i AS BIGINT) AS moment,
       CAST(SUM(COALESCE(d.dc, 0)) OVER (ORDER BY m.i ROWS UNBOUNDED PRECEDING) AS BIGINT) AS converged,
       CAST(SUM(COALESCE(d.dn, 0)) OVER (ORDER BY m.i ROWS UNBOUNDED PRECEDING) AS BIGINT) AS not_converged
FROM moment m LEFT JOIN deltas d ON d.i = m.i
ORDER BY m.i;
