-- +goose Up
-- How a page session was opened: 'token' with the sign-in form (an operator's token or
-- HQ_ADMIN_TOKEN; every session from before this), 'oidc' through the OpenID Connect provider,
-- whose person is the row's operator and role alone, with token_id 0.
ALTER TABLE web_sessions ADD COLUMN via TEXT NOT NULL DEFAULT 'token' CHECK (via IN ('token', 'oidc'));

-- +goose Down
ALTER TABLE web_sessions DROP COLUMN via;
