-- name: WebSessionInsert :exec
INSERT INTO web_sessions (id_hash, created_at, expires_at) VALUES (@id_hash, @created_at, @expires_at);

-- name: WebSessionValid :one
SELECT COUNT(*) FROM web_sessions WHERE id_hash = @id_hash AND expires_at > @now;

-- name: WebSessionDelete :exec
DELETE FROM web_sessions WHERE id_hash = @id_hash;

-- name: WebSessionDeleteExpired :execrows
DELETE FROM web_sessions WHERE expires_at <= @now;
