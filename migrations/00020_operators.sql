-- +goose Up
-- operators: the people (and scripts) that call the API and sign in to the pages, each with one
-- role. viewer reads; deployer also changes modules, assignments, labels, vars, placements and
-- rollouts; admin also operators, nodes' registration and deletion, and the signing key.
-- modules (a glob such as web-*) and nodes (a label selector such as team=web) narrow what a
-- deployer may change; '' is no bound. revoked_at ends the operator and all its tokens at once;
-- its name stays, for the audit log.
CREATE TABLE operators (
    name        TEXT NOT NULL PRIMARY KEY,
    role        TEXT NOT NULL CHECK (role IN ('viewer', 'deployer', 'admin')),
    modules     TEXT NOT NULL DEFAULT '',
    nodes       TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    created_by  TEXT NOT NULL DEFAULT '',
    revoked_at  TEXT
);

-- operator_tokens: an operator's bearer tokens, kept only as the SHA-256 of the token (a random
-- 130-bit text, so a hash is as good as a slow one). expires_at NULL never expires.
CREATE TABLE operator_tokens (
    id          INTEGER PRIMARY KEY,
    operator    TEXT NOT NULL REFERENCES operators (name),
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    revoked_at  TEXT
);
CREATE INDEX operator_tokens_by_operator ON operator_tokens (operator);

-- audit_log: one row per operator request that changed something or was refused. Rows are
-- never changed, and leave only by retention's prune (HQ_AUDIT_RETAIN): the triggers refuse
-- UPDATE always and DELETE unless audit_prune says a prune is running in this transaction.
-- result is the revision or generation the request made (0: none); outcome its HTTP status.
CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY,
    at        TEXT NOT NULL,
    operator  TEXT NOT NULL,
    role      TEXT NOT NULL,
    via       TEXT NOT NULL CHECK (via IN ('api', 'page', 'cli')),
    source    TEXT NOT NULL,
    action    TEXT NOT NULL,
    object    TEXT NOT NULL,
    result    INTEGER NOT NULL DEFAULT 0,
    outcome   INTEGER NOT NULL,
    detail    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_by_at ON audit_log (at);
CREATE INDEX audit_log_by_operator ON audit_log (operator, id);
CREATE INDEX audit_log_by_object ON audit_log (object, id);

-- audit_prune: one row; pruning is 1 only inside retention's prune transaction, which sets it
-- back before it commits.
CREATE TABLE audit_prune (
    one      INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
    pruning  INTEGER NOT NULL DEFAULT 0 CHECK (pruning IN (0, 1))
);
INSERT INTO audit_prune (one, pruning) VALUES (1, 0);

-- +goose StatementBegin
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN (SELECT pruning FROM audit_prune WHERE one = 1) IS NOT 1
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only: rows leave it only by retention''s prune');
END;
-- +goose StatementEnd

-- Who: a page session's operator and role ('admin' for the sessions before operators, all of
-- them HQ_ADMIN_TOKEN's), and the operator token it was opened with (0: none, as for the
-- bootstrap admin), so that revoking the token ends the session too.
ALTER TABLE web_sessions ADD COLUMN operator TEXT NOT NULL DEFAULT 'admin';
ALTER TABLE web_sessions ADD COLUMN role TEXT NOT NULL DEFAULT 'admin';
ALTER TABLE web_sessions ADD COLUMN token_id INTEGER NOT NULL DEFAULT 0;

-- Authorship: who pushed a revision and why; who made an assignment and who took it; who last
-- steered a rollout (paused, resumed, promoted, aborted, or started it by a rollback) and how.
-- '' is unknown: rows from before operators.
ALTER TABLE module_revisions ADD COLUMN pushed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE module_revisions ADD COLUMN message TEXT NOT NULL DEFAULT '';
ALTER TABLE assignments ADD COLUMN assigned_by TEXT NOT NULL DEFAULT '';
ALTER TABLE assignments ADD COLUMN taken_by TEXT NOT NULL DEFAULT '';
ALTER TABLE rollouts ADD COLUMN steered_by TEXT NOT NULL DEFAULT '';
ALTER TABLE rollouts ADD COLUMN steered TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE rollouts DROP COLUMN steered;
ALTER TABLE rollouts DROP COLUMN steered_by;
ALTER TABLE assignments DROP COLUMN taken_by;
ALTER TABLE assignments DROP COLUMN assigned_by;
ALTER TABLE module_revisions DROP COLUMN message;
ALTER TABLE module_revisions DROP COLUMN pushed_by;
ALTER TABLE web_sessions DROP COLUMN token_id;
ALTER TABLE web_sessions DROP COLUMN role;
ALTER TABLE web_sessions DROP COLUMN operator;
DROP TABLE audit_prune;
DROP TABLE audit_log;
DROP TABLE operator_tokens;
DROP TABLE operators;
