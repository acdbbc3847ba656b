-- name: WebSessionInsert :exec
INSERT INTO web_sessions (id_hash, created_at, expires_at, operator, role, token_id, via)
VALUES (@id_hash, @created_at, @expires_at, @operator, @role, @token_id, @via);

-- WebSessionGet is a session that has not ended or expired, with who it is: for one opened with
-- an operator token, the operator's binding now, and nothing once that token is revoked or
-- expired; for one opened otherwise (token_id 0: HQ_ADMIN_TOKEN, or the OpenID Connect
-- provider), the operator and role it was opened as.
-- name: WebSessionGet :one
SELECT s.operator, s.role, s.token_id, s.via,
       COALESCE(o.role, '') AS bound_role, COALESCE(o.modules, '') AS modules, COALESCE(o.nodes, '') AS nodes
FROM web_sessions s
LEFT JOIN operator_tokens t ON t.id = s.token_id
LEFT JOIN operators o ON o.name = t.operator
WHERE s.id_hash = @id_hash AND s.expires_at > @now
  AND (s.token_id = 0 OR (t.id IS NOT NULL AND t.revoked_at IS NULL AND o.revoked_at IS NULL
       AND (t.expires_at IS NULL OR t.expires_at > @now)));

-- name: WebSessionDelete :exec
DELETE FROM web_sessions WHERE id_hash = @id_hash;

-- name: WebSessionDeleteExpired :execrows
DELETE FROM web_sessions WHERE expires_at <= @now;
