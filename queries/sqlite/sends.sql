-- name: SendListByNode :many
SELECT * FROM sends WHERE node = @node ORDER BY id DESC LIMIT @max;

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
