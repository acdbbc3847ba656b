-- name: SecretVersionListNotTo :many
-- Versions encrypted to another key than recipient, a chunk at a time: what a rekey has left.
SELECT name, version, digest, ciphertext, recipient, created_at FROM secret_versions
WHERE recipient <> @recipient ORDER BY name, version LIMIT @max;
