-- +goose Up
-- web_sessions: one row per browser signed in to the status pages. The cookie carries a random
-- session id; the row keeps only a hash of it (bound to the operator token), so a copy of the
-- database signs no one in and a new operator token ends every session. Signing out deletes
-- the row; rows past expires_at are deleted when the next session is created.
CREATE TABLE web_sessions (
    id_hash     TEXT NOT NULL PRIMARY KEY,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at);

-- +goose Down
DROP TABLE web_sessions;
