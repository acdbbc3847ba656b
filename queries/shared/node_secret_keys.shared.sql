-- name: NodeSecretKeyGet :one
SELECT public_key FROM node_secret_keys WHERE node = @node;

-- name: NodeSecretKeySet :execrows
-- The node's key, registered; zero rows when it is the key already registered.
INSERT INTO node_secret_keys (node, public_key, registered_at) VALUES (@node, @public_key, @now)
ON CONFLICT (node) DO UPDATE SET public_key = excluded.public_key, registered_at = excluded.registered_at
WHERE node_secret_keys.public_key <> excluded.public_key;
