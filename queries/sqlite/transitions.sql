-- name: TransitionListByNode :many
SELECT * FROM transitions WHERE node = @node ORDER BY id DESC LIMIT @max;

-- name: TransitionPruneWindowEnd :one
-- The last row of the next window of at most @batch rows after @after, oldest first, and its
-- time: retention walks the table in windows so no pass holds the writer for long.
SELECT id, at AS at FROM (SELECT id, at FROM transitions WHERE id > @after ORDER BY id LIMIT @batch)
ORDER BY id DESC LIMIT 1;

-- name: TransitionPrune :execrows
-- Rows of the window (@after, @until] older than @cutoff, except each node's newest @keep.
DELETE FROM transitions WHERE id IN (
    SELECT w.id FROM transitions w
    -- Each node of the window once: the id from which its newest @keep+1 rows begin.
    JOIN (SELECT n.node AS node,
                 (SELECT k.id FROM transitions k WHERE k.node = n.node ORDER BY k.id DESC LIMIT 1 OFFSET @keep) AS from_id
          FROM (SELECT DISTINCT d.node FROM transitions d WHERE d.id > @after AND d.id <= @until) n) kept ON kept.node = w.node
    WHERE w.id > @after AND w.id <= @until AND w.at < @cutoff AND w.id < COALESCE(kept.from_id, 0)
);
