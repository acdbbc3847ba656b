-- name: NodeGenerationTotal :one
-- The nodes and the sum of their generations: generations only grow, so while neither moves
-- no node's generation has, and the watcher need not read them one by one.
SELECT COUNT(*) AS nodes, CAST(COALESCE(SUM(generation), 0) AS bigint) AS generations FROM nodes WHERE deleted_at IS NULL;

-- name: NodeBumpGenerations :many
-- One step of every node named (a JSON array), in one statement.
UPDATE nodes SET generation = generation + 1
WHERE name IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json))
RETURNING name, generation;

-- name: NodeListByNames :many
SELECT * FROM nodes WHERE name IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json)) AND deleted_at IS NULL ORDER BY name;
