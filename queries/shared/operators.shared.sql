-- name: OperatorInsert :exec
INSERT INTO operators (name, role, modules, nodes, created_at, created_by)
VALUES (@name, @role, @modules, @nodes, @created_at, @created_by);

-- name: OperatorGet :one
SELECT * FROM operators WHERE name = @name;

-- name: OperatorList :many
SELECT * FROM operators ORDER BY name;

-- name: OperatorRevoke :execrows
UPDATE operators SET revoked_at = @now WHERE name = @name AND revoked_at IS NULL;

-- name: OperatorAdminCount :one
SELECT COUNT(*) FROM operators WHERE role = 'admin' AND revoked_at IS NULL;

-- name: OperatorTokenInsert :one
INSERT INTO operator_tokens (operator, token_hash, created_at, expires_at)
VALUES (@operator, @token_hash, @created_at, @expires_at)
RETURNING id;

-- name: OperatorTokenRevokeAll :exec
UPDATE operator_tokens SET revoked_at = @now WHERE operator = @operator AND revoked_at IS NULL;

-- name: OperatorTokenRevoke :execrows
UPDATE operator_tokens SET revoked_at = @now WHERE id = @id AND revoked_at IS NULL;

-- name: OperatorTokenList :many
SELECT id, operator, created_at, expires_at, revoked_at FROM operator_tokens ORDER BY operator, id;

-- OperatorTokenCheck finds a token by its hash with its operator's binding; whether it is still
-- good (neither it nor its operator revoked, not expired) the store decides, so that a refused
-- token still names whose it was.
-- name: OperatorTokenCheck :one
SELECT t.id, t.token_hash, t.expires_at, t.revoked_at,
       o.name, o.role, o.modules, o.nodes, o.revoked_at AS operator_revoked_at
FROM operator_tokens t JOIN operators o ON o.name = t.operator
WHERE t.token_hash = @token_hash;
