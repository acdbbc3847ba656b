-- +goose Up
-- Times are UTC text of one fixed width, 2026-11-30T03:12:00.000Z, so they sort as text and read
-- plainly in sqlite3. Booleans are 0/1 integers. Nothing here is SQLite-only where that costs nothing.

-- nodes: one row per registered machine. generation is bumped in the same transaction as every
-- change to the node's declaration; applied_generation is the newest one it reported applying.
CREATE TABLE nodes (
    name                  TEXT    NOT NULL PRIMARY KEY,
    token_hash            TEXT    NOT NULL,
    generation            INTEGER NOT NULL DEFAULT 0,
    applied_generation    INTEGER NOT NULL DEFAULT 0,
    applied_digest        TEXT    NOT NULL DEFAULT '',
    applied_at            TEXT,
    created_at            TEXT    NOT NULL,
    last_report_at        TEXT,
    last_report_id        INTEGER
);
CREATE UNIQUE INDEX nodes_by_token_hash ON nodes (token_hash);

-- modules: one row per module; revision is its newest revision.
CREATE TABLE modules (
    name        TEXT    NOT NULL PRIMARY KEY,
    revision    INTEGER NOT NULL,
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL
);

-- module_revisions: every upload, kept. resources is the JSON array as uploaded (validated).
CREATE TABLE module_revisions (
    module          TEXT    NOT NULL REFERENCES modules (name) ON DELETE CASCADE,
    revision        INTEGER NOT NULL,
    resources       TEXT    NOT NULL,
    resource_count  INTEGER NOT NULL,
    digest          TEXT    NOT NULL,
    created_at      TEXT    NOT NULL,
    PRIMARY KEY (module, revision)
);

-- assignments: module on node. taken lets the module adopt state it finds on the machine.
CREATE TABLE assignments (
    node         TEXT    NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
    module       TEXT    NOT NULL REFERENCES modules (name),
    taken        INTEGER NOT NULL DEFAULT 0 CHECK (taken IN (0, 1)),
    assigned_at  TEXT    NOT NULL,
    PRIMARY KEY (node, module)
);
CREATE INDEX assignments_by_module ON assignments (module);

-- lifecycle: the allowed changes of resource_states.state. A trigger refuses any other.
CREATE TABLE lifecycle (
    from_state  TEXT NOT NULL,
    to_state    TEXT NOT NULL,
    PRIMARY KEY (from_state, to_state)
);
INSERT INTO lifecycle (from_state, to_state) VALUES
    ('pending', 'applied'), ('pending', 'failed'), ('pending', 'held'), ('pending', 'grouped-pending'),
    ('applied', 'pending'), ('applied', 'failed'), ('applied', 'held'), ('applied', 'grouped-pending'),
    ('failed', 'pending'), ('failed', 'applied'), ('failed', 'stuck'), ('failed', 'held'), ('failed', 'grouped-pending'),
    ('stuck', 'pending'), ('stuck', 'applied'), ('stuck', 'held'), ('stuck', 'grouped-pending'),
    ('held', 'pending'), ('held', 'applied'), ('held', 'failed'), ('held', 'grouped-pending'),
    ('grouped-pending', 'pending'), ('grouped-pending', 'applied'), ('grouped-pending', 'failed'), ('grouped-pending', 'held');

-- resource_states: where every declared resource stands on every node (node x module/resource).
-- Rows are created pending when a module is assigned and deleted when it is no longer declared.
CREATE TABLE resource_states (
    node                  TEXT    NOT NULL,
    module                TEXT    NOT NULL,
    resource              TEXT    NOT NULL,
    kind                  TEXT    NOT NULL,
    spec_digest           TEXT    NOT NULL,
    position              INTEGER NOT NULL,
    group_name            TEXT    NOT NULL DEFAULT '',
    state                 TEXT    NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'applied', 'failed', 'stuck', 'held', 'grouped-pending')),
    since                 TEXT    NOT NULL,
    attempts              INTEGER NOT NULL DEFAULT 0,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0,
    failing_since         TEXT,
    never_applied         INTEGER NOT NULL DEFAULT 1 CHECK (never_applied IN (0, 1)),
    last_error            TEXT    NOT NULL DEFAULT '',
    hold_reason           TEXT    NOT NULL DEFAULT '',
    blocked_by            TEXT    NOT NULL DEFAULT '',
    retry_requested       INTEGER NOT NULL DEFAULT 0 CHECK (retry_requested IN (0, 1)),
    report_id             INTEGER,
    reason                TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (node, module, resource),
    FOREIGN KEY (node, module) REFERENCES assignments (node, module) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE INDEX resource_states_by_state ON resource_states (state, module, resource);
-- Every report asks for its node's stuck resources and pending retries: without these it
-- would read all of the node's rows to find none.
CREATE INDEX resource_states_by_node_state ON resource_states (node, state);
CREATE INDEX resource_states_retry ON resource_states (node) WHERE retry_requested = 1;

-- transitions: the history of every change of state, written only by the triggers below.
-- from_state is NULL when the resource was first declared; to_state 'removed' when it left.
CREATE TABLE transitions (
    id          INTEGER PRIMARY KEY,
    node        TEXT    NOT NULL,
    module      TEXT    NOT NULL,
    resource    TEXT    NOT NULL,
    from_state  TEXT,
    to_state    TEXT    NOT NULL,
    at          TEXT    NOT NULL,
    report_id   INTEGER,
    reason      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX transitions_by_node ON transitions (node, id);

-- +goose StatementBegin
CREATE TRIGGER resource_states_new_is_pending BEFORE INSERT ON resource_states
WHEN NEW.state <> 'pending'
BEGIN
    SELECT RAISE(ABORT, 'resource_states: a resource enters the lifecycle as pending');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER resource_states_lifecycle BEFORE UPDATE OF state ON resource_states
WHEN OLD.state <> NEW.state
 AND NOT EXISTS (SELECT 1 FROM lifecycle WHERE from_state = OLD.state AND to_state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'resource_states: transition not allowed by lifecycle');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER resource_states_declared AFTER INSERT ON resource_states
BEGIN
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    VALUES (NEW.node, NEW.module, NEW.resource, NULL, NEW.state, NEW.since, NEW.report_id, NEW.reason);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER resource_states_changed AFTER UPDATE OF state ON resource_states
WHEN OLD.state <> NEW.state
BEGIN
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    VALUES (NEW.node, NEW.module, NEW.resource, OLD.state, NEW.state,
            CASE WHEN NEW.since <> OLD.since THEN NEW.since ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END,
            NEW.report_id,
            CASE WHEN NEW.reason <> OLD.reason THEN NEW.reason ELSE 'set directly in the database' END);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER resource_states_removed AFTER DELETE ON resource_states
BEGIN
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    VALUES (OLD.node, OLD.module, OLD.resource, OLD.state, 'removed',
            strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL, 'no longer declared');
END;
-- +goose StatementEnd

-- sends: every delivery of a declaration to a host. outcome moves from sent to applied, refused
-- or superseded as reports arrive.
CREATE TABLE sends (
    id           INTEGER PRIMARY KEY,
    node         TEXT    NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
    generation   INTEGER NOT NULL,
    digest       TEXT    NOT NULL,
    resources    INTEGER NOT NULL,
    composed_by  TEXT    NOT NULL,
    sent_at      TEXT    NOT NULL,
    outcome      TEXT    NOT NULL DEFAULT 'sent' CHECK (outcome IN ('sent', 'applied', 'refused', 'superseded')),
    outcome_at   TEXT,
    reason       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX sends_by_node ON sends (node, id);
-- Every report marks the sends it answers; only the unanswered ones need finding.
CREATE INDEX sends_unanswered ON sends (node, generation) WHERE outcome = 'sent';

-- reports: one row per distinct outcome a node reported. A report identical in outcome to the
-- one before adds no row: it bumps repeats and last_at.
CREATE TABLE reports (
    id               INTEGER PRIMARY KEY,
    node             TEXT    NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
    generation       INTEGER NOT NULL,
    digest           TEXT    NOT NULL,
    summary          TEXT    NOT NULL,
    outcome_digest   TEXT    NOT NULL,
    applied          INTEGER NOT NULL DEFAULT 0,
    failed           INTEGER NOT NULL DEFAULT 0,
    stuck            INTEGER NOT NULL DEFAULT 0,
    held             INTEGER NOT NULL DEFAULT 0,
    grouped_pending  INTEGER NOT NULL DEFAULT 0,
    pending          INTEGER NOT NULL DEFAULT 0,
    started_at       TEXT,
    finished_at      TEXT,
    at               TEXT    NOT NULL,
    last_at          TEXT    NOT NULL,
    repeats          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX reports_by_node ON reports (node, id);

-- +goose Down
DROP TABLE reports;
DROP TABLE sends;
DROP TRIGGER resource_states_removed;
DROP TRIGGER resource_states_changed;
DROP TRIGGER resource_states_declared;
DROP TRIGGER resource_states_lifecycle;
DROP TRIGGER resource_states_new_is_pending;
DROP TABLE transitions;
DROP TABLE resource_states;
DROP TABLE lifecycle;
DROP TABLE assignments;
DROP TABLE module_revisions;
DROP TABLE modules;
DROP TABLE nodes;
