-- name: SecretList :many
SELECT name, template_key, version, updated_at FROM secrets ORDER BY name;

-- name: SecretGet :one
SELECT name, template_key, version, updated_at FROM secrets WHERE name = @name;

-- name: SecretUpsert :one
-- A new version of a secret, made when it is new: its newest version number.
INSERT INTO secrets (name, template_key, version, created_at, updated_at) VALUES (@name, @template_key, 1, @now, @now)
ON CONFLICT (name) DO UPDATE SET version = secrets.version + 1, updated_at = excluded.updated_at
RETURNING version;

-- name: SecretDelete :exec
DELETE FROM secrets WHERE name = @name;

-- name: SecretVersionInsert :exec
INSERT INTO secret_versions (name, version, digest, ciphertext, recipient, created_at)
VALUES (@name, @version, @digest, @ciphertext, @recipient, @created_at);

-- name: SecretVersionGet :one
SELECT name, version, digest, ciphertext, recipient, created_at FROM secret_versions
WHERE name = @name AND version = @version;

-- name: SecretVersionList :many
-- A secret's versions, newest first, without their ciphertext.
SELECT version, digest, created_at FROM secret_versions WHERE name = @name ORDER BY version DESC;

-- name: SecretVersionListNotTo :many
-- Versions encrypted to another key than recipient, a chunk at a time: what a rekey has left.
SELECT name, version, digest, ciphertext, recipient, created_at FROM secret_versions
WHERE recipient <> @recipient ORDER BY name, version LIMIT @max::bigint;

-- name: SecretVersionReencrypt :execrows
-- A version encrypted again, unless another rekey got there first.
UPDATE secret_versions SET ciphertext = @ciphertext, recipient = @recipient
WHERE name = @name AND version = @version AND recipient = @was;

-- name: SecretModules :many
-- The modules whose newest revision pins the secret.
SELECT DISTINCT s.module FROM module_revision_secrets s
JOIN modules m ON m.name = s.module AND m.revision = s.revision
WHERE s.name = @name ORDER BY s.module;

-- name: SecretNodeCount :one
-- The nodes pinned to a revision that uses the secret.
SELECT COUNT(DISTINCT a.node) FROM assignments a
JOIN module_revision_secrets s ON s.module = a.module AND s.revision = a.revision
WHERE s.name = @name;

-- name: NodeSecretUse :one
-- Whether a revision the node is pinned to uses any secret: 1 if so, else 0.
SELECT COUNT(*) FROM (
  SELECT 1 FROM assignments a
  JOIN module_revision_secrets s ON s.module = a.module AND s.revision = a.revision
  WHERE a.node = @node LIMIT 1
) AS used;

-- name: ModuleRevisionSecretInsert :exec
INSERT INTO module_revision_secrets (module, revision, name, version) VALUES (@module, @revision, @name, @version);
