-- name: DriftListByNode :many
SELECT * FROM drifts WHERE node = @node ORDER BY id DESC LIMIT @max;

-- name: DriftCountsByNodesSince :many
-- How often each resource of some nodes (a JSON array of names) drifted since @since, those
-- at @threshold or more.
SELECT node, module, resource, COUNT(*) AS drifts FROM drifts
WHERE node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT))) AND at >= @since
GROUP BY node, module, resource HAVING COUNT(*) >= CAST(@threshold AS INTEGER)
ORDER BY node, COUNT(*) DESC, module, resource;

-- name: DriftTopSince :many
-- The resources that drift most across the mesh since @since.
SELECT module, resource, COUNT(DISTINCT node) AS nodes, COUNT(*) AS drifts FROM drifts
WHERE at >= @since
GROUP BY module, resource
ORDER BY COUNT(*) DESC, module, resource
LIMIT @max;

-- name: DriftPruneWindowEnd :one
-- The last row of the next window of at most @batch rows after @after, oldest first, and its
-- time: retention walks the table in windows so no pass holds the writer for long.
SELECT id, at FROM (SELECT id, at FROM drifts WHERE id > @after ORDER BY id LIMIT @batch)
ORDER BY id DESC LIMIT 1;

-- name: DriftPrune :execrows
-- Rows of the window (@after, @until] older than @cutoff, except each node's newest @keep.
DELETE FROM drifts WHERE id IN (
    SELECT w.id FROM drifts w
    -- Each node of the window once: the id from which its newest @keep+1 rows begin.
    JOIN (SELECT n.node AS node,
                 (SELECT k.id FROM drifts k WHERE k.node = n.node ORDER BY k.id DESC LIMIT 1 OFFSET @keep) AS from_id
          FROM (SELECT DISTINCT d.node FROM drifts d WHERE d.id > @after AND d.id <= @until) n) kept ON kept.node = w.node
    WHERE w.id > @after AND w.id <= @until AND w.at < @cutoff AND w.id < COALESCE(kept.from_id, 0)
);
