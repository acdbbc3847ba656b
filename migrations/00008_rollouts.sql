-- +goose Up
-- Rollouts: how a new revision of a placed module reaches the placement's nodes in waves.
-- A state machine in SQL like resources: the states move only along rollout_lifecycle's rows
-- (a trigger refuses the rest, also from sqlite3), and every change lands in
-- rollout_transitions. rollout_nodes is the progress of each node.
CREATE TABLE rollout_lifecycle (
    from_state TEXT NOT NULL,
    to_state TEXT NOT NULL,
    PRIMARY KEY (from_state, to_state)
) WITHOUT ROWID;
INSERT INTO rollout_lifecycle (from_state, to_state) VALUES
    ('progressing', 'paused'),
    ('progressing', 'complete'),
    ('progressing', 'aborted'),
    ('paused', 'progressing'),
    ('paused', 'aborted');

CREATE TABLE rollouts (
    id INTEGER PRIMARY KEY,
    module TEXT NOT NULL,
    placement TEXT NOT NULL,
    from_revision INTEGER NOT NULL,
    to_revision INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'progressing' CHECK (state IN ('progressing', 'paused', 'complete', 'aborted')),
    -- policy is the placement's rollout policy when the rollout started, a JSON object.
    policy TEXT NOT NULL,
    -- The counts are of rollout_nodes by state, kept by the rollout loop; failed counts the
    -- reverted too. forgiven is how many failures a resume set aside.
    nodes INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0,
    in_flight INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    forgiven INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    ended_at TEXT
);
CREATE INDEX rollouts_by_module ON rollouts (module, to_revision);
CREATE INDEX rollouts_active ON rollouts (state) WHERE state IN ('progressing', 'paused');

CREATE TABLE rollout_transitions (
    id INTEGER PRIMARY KEY,
    rollout INTEGER NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    from_state TEXT NOT NULL,
    to_state TEXT NOT NULL,
    reason TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX rollout_transitions_by_rollout ON rollout_transitions (rollout, id);

-- +goose StatementBegin
CREATE TRIGGER rollouts_lifecycle BEFORE UPDATE OF state ON rollouts
WHEN OLD.state <> NEW.state
  AND NOT EXISTS (SELECT 1 FROM rollout_lifecycle l WHERE l.from_state = OLD.state AND l.to_state = NEW.state)
BEGIN
    SELECT RAISE(ABORT, 'rollout state change not in rollout_lifecycle');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER rollouts_transition AFTER UPDATE OF state ON rollouts
WHEN OLD.state <> NEW.state
BEGIN
    INSERT INTO rollout_transitions (rollout, from_state, to_state, reason, at)
    VALUES (NEW.id, OLD.state, NEW.state, NEW.reason, NEW.updated_at);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER rollouts_started AFTER INSERT ON rollouts
BEGIN
    INSERT INTO rollout_transitions (rollout, from_state, to_state, reason, at)
    VALUES (NEW.id, '', NEW.state, NEW.reason, NEW.created_at);
END;
-- +goose StatementEnd

-- One row per node a rollout governs. wave is 0 until the node is advanced (1 for the
-- canaries, then 2, 3, …); generation is the node's generation that first declared the new
-- revision; from_revision is the pin it had, which a revert puts back.
CREATE TABLE rollout_nodes (
    rollout INTEGER NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    node TEXT NOT NULL,
    from_revision INTEGER NOT NULL,
    wave INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'in-flight', 'done', 'failed', 'reverted')),
    generation INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL DEFAULT '',
    started_at TEXT,
    ended_at TEXT,
    PRIMARY KEY (rollout, node)
) WITHOUT ROWID;
CREATE INDEX rollout_nodes_by_node ON rollout_nodes (node);

-- +goose Down
DROP TABLE rollout_nodes;
DROP TRIGGER rollouts_started;
DROP TRIGGER rollouts_transition;
DROP TRIGGER rollouts_lifecycle;
DROP TABLE rollout_transitions;
DROP TABLE rollouts;
DROP TABLE rollout_lifecycle;
