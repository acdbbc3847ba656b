-- name: SecretSealListByNode :many
-- What is sealed to the node's key now, for its declaration.
SELECT name, version, sealed FROM secret_seals WHERE node = @node AND node_key = @node_key;

-- name: SecretSealInsert :exec
-- A version sealed to a node's key; the first seal kept, so the declaration's digest stays.
INSERT INTO secret_seals (node, name, version, node_key, sealed) VALUES (@node, @name, @version, @node_key, @sealed)
ON CONFLICT (node, node_key, name, version) DO NOTHING;

-- name: SecretSealDeleteOtherKeys :exec
-- Seals to a key the node has replaced, which nothing can open any more.
DELETE FROM secret_seals WHERE node = @node AND node_key <> @node_key;
