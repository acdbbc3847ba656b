-- +goose Up
-- How a page session was opened, as SQLite's migration 00021 describes it.
ALTER TABLE web_sessions ADD COLUMN via TEXT COLLATE "C" NOT NULL DEFAULT 'token' CHECK (via IN ('token', 'oidc'));

-- +goose Down
ALTER TABLE web_sessions DROP COLUMN via;
