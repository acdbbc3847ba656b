-- +goose Up
-- The PostgreSQL schema: the same tables, columns, views and lifecycle rules as the SQLite
-- migrations reach at their latest, so an operator's queries read the same on both engines and
-- the store runs one set of queries per engine with the same shapes. Times are RFC 3339 UTC
-- text with milliseconds (hq_time), as on SQLite, so that both compare and sort them as text;
-- counts and flags are bigint, flags 0 or 1. Text compares as bytes (COLLATE "C"), as
-- SQLite's does, whatever the database's collation: names page and sort alike on both.

-- hq_time is the text form of a moment, the one hq.FormatTime writes.
-- +goose StatementBegin
CREATE FUNCTION hq_time(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;
-- +goose StatementEnd

-- hq_lock_writes takes the lock every write to hq's tables takes first, for the rest of the
-- transaction: hq's write transactions take it before their first statement, and a trigger on
-- each table takes it for a change made by hand, so writes from every controller and from
-- psql take turns as they do in one SQLite file. It is per schema, so two deployments in two
-- schemas of one database do not wait for each other. Taking it again is free.
-- +goose StatementBegin
CREATE FUNCTION hq_lock_writes() RETURNS void LANGUAGE sql AS $$
    SELECT pg_advisory_xact_lock(1752244340, hashtext(current_schema()))
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION hq_lock_writes_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM hq_lock_writes();
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TABLE nodes (
    name                       TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    token_hash                 TEXT COLLATE "C"   NOT NULL,
    generation                 BIGINT NOT NULL DEFAULT 0,
    applied_generation         BIGINT NOT NULL DEFAULT 0,
    applied_digest             TEXT COLLATE "C"   NOT NULL DEFAULT '',
    applied_at                 TEXT COLLATE "C",
    created_at                 TEXT COLLATE "C"   NOT NULL,
    last_report_at             TEXT COLLATE "C",
    last_report_id             BIGINT,
    deleted_at                 TEXT COLLATE "C",
    -- resources_<state>: how many of the node's resource_states rows are in that state, kept by
    -- the triggers on resource_states so that the mesh's figures read one row per node.
    resources_applied          BIGINT NOT NULL DEFAULT 0,
    resources_pending          BIGINT NOT NULL DEFAULT 0,
    resources_failed           BIGINT NOT NULL DEFAULT 0,
    resources_stuck            BIGINT NOT NULL DEFAULT 0,
    resources_held             BIGINT NOT NULL DEFAULT 0,
    resources_grouped_pending  BIGINT NOT NULL DEFAULT 0,
    labels                     TEXT COLLATE "C"   NOT NULL DEFAULT '{}',
    vars                       TEXT COLLATE "C"   NOT NULL DEFAULT '{}'
);
CREATE UNIQUE INDEX nodes_by_token_hash ON nodes (token_hash);

CREATE TABLE modules (
    name        TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    revision    BIGINT NOT NULL,
    created_at  TEXT COLLATE "C"   NOT NULL,
    updated_at  TEXT COLLATE "C"   NOT NULL
);

CREATE TABLE module_revisions (
    module          TEXT COLLATE "C"   NOT NULL REFERENCES modules (name) ON DELETE CASCADE,
    revision        BIGINT NOT NULL,
    resources       TEXT COLLATE "C"   NOT NULL,
    resource_count  BIGINT NOT NULL,
    digest          TEXT COLLATE "C"   NOT NULL,
    created_at      TEXT COLLATE "C"   NOT NULL,
    PRIMARY KEY (module, revision)
);

CREATE TABLE assignments (
    node         TEXT COLLATE "C"   NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
    module       TEXT COLLATE "C"   NOT NULL REFERENCES modules (name),
    taken        BIGINT NOT NULL DEFAULT 0 CHECK (taken IN (0, 1)),
    assigned_at  TEXT COLLATE "C"   NOT NULL,
    revision     BIGINT NOT NULL DEFAULT 0,
    source       TEXT COLLATE "C"   NOT NULL DEFAULT 'operator',
    PRIMARY KEY (node, module)
);
CREATE INDEX assignments_by_module ON assignments (module);
CREATE INDEX assignments_by_module_revision ON assignments (module, revision);
CREATE INDEX assignments_by_source ON assignments (source, module) WHERE source <> 'operator';

-- lifecycle: every state change a resource may make; the triggers refuse any other.
CREATE TABLE lifecycle (
    from_state  TEXT COLLATE "C" NOT NULL,
    to_state    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (from_state, to_state)
);
INSERT INTO lifecycle (from_state, to_state) VALUES
    ('pending', 'applied'), ('pending', 'failed'), ('pending', 'held'), ('pending', 'grouped-pending'),
    ('applied', 'pending'), ('applied', 'failed'), ('applied', 'held'), ('applied', 'grouped-pending'),
    ('failed', 'pending'), ('failed', 'applied'), ('failed', 'stuck'), ('failed', 'held'), ('failed', 'grouped-pending'),
    ('stuck', 'pending'), ('stuck', 'applied'), ('stuck', 'held'), ('stuck', 'grouped-pending'),
    ('held', 'pending'), ('held', 'applied'), ('held', 'failed'), ('held', 'grouped-pending'),
    ('grouped-pending', 'pending'), ('grouped-pending', 'applied'), ('grouped-pending', 'failed'), ('grouped-pending', 'held');

-- resource_states: where every declared resource stands on every node.
CREATE TABLE resource_states (
    node                  TEXT COLLATE "C"   NOT NULL,
    module                TEXT COLLATE "C"   NOT NULL,
    resource              TEXT COLLATE "C"   NOT NULL,
    kind                  TEXT COLLATE "C"   NOT NULL,
    spec_digest           TEXT COLLATE "C"   NOT NULL,
    position              BIGINT NOT NULL,
    group_name            TEXT COLLATE "C"   NOT NULL DEFAULT '',
    state                 TEXT COLLATE "C"   NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'applied', 'failed', 'stuck', 'held', 'grouped-pending')),
    since                 TEXT COLLATE "C"   NOT NULL,
    attempts              BIGINT NOT NULL DEFAULT 0,
    consecutive_failures  BIGINT NOT NULL DEFAULT 0,
    failing_since         TEXT COLLATE "C",
    never_applied         BIGINT NOT NULL DEFAULT 1 CHECK (never_applied IN (0, 1)),
    last_error            TEXT COLLATE "C"   NOT NULL DEFAULT '',
    hold_reason           TEXT COLLATE "C"   NOT NULL DEFAULT '',
    blocked_by            TEXT COLLATE "C"   NOT NULL DEFAULT '',
    retry_requested       BIGINT NOT NULL DEFAULT 0 CHECK (retry_requested IN (0, 1)),
    report_id             BIGINT,
    reason                TEXT COLLATE "C"   NOT NULL DEFAULT '',
    PRIMARY KEY (node, module, resource),
    FOREIGN KEY (node, module) REFERENCES assignments (node, module) ON DELETE CASCADE
);
CREATE INDEX resource_states_retry ON resource_states (node) WHERE retry_requested = 1;
-- Only the rows that are not fine are indexed by state: those are what operators ask about,
-- and indexing every row would cost each fleet-wide write several times over.
CREATE INDEX resource_states_not_fine ON resource_states (state, module, resource)
    WHERE state NOT IN ('applied', 'pending');
CREATE INDEX resource_states_not_fine_by_node ON resource_states (node, state)
    WHERE state NOT IN ('applied', 'pending');
CREATE INDEX resource_states_blocked ON resource_states (node, blocked_by) WHERE blocked_by <> '';

-- transitions: every state change of every resource, written by the triggers.
CREATE TABLE transitions (
    id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    node        TEXT COLLATE "C"   NOT NULL,
    module      TEXT COLLATE "C"   NOT NULL,
    resource    TEXT COLLATE "C"   NOT NULL,
    from_state  TEXT COLLATE "C",
    to_state    TEXT COLLATE "C"   NOT NULL,
    at          TEXT COLLATE "C"   NOT NULL,
    report_id   BIGINT,
    reason      TEXT COLLATE "C"   NOT NULL DEFAULT ''
);
CREATE INDEX transitions_by_node ON transitions (node, id);

-- A row enters as pending and keeps its key: checked row by row before it is written, as
-- SQLite does (an INSERT … ON CONFLICT DO NOTHING of a stuck row is refused too), at the cost
-- of the WHEN test for every other row.
-- +goose StatementBegin
CREATE FUNCTION resource_states_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        RAISE EXCEPTION 'resource_states: a resource enters the lifecycle as pending';
    END IF;
    RAISE EXCEPTION 'resource_states: a resource keeps its node, module and name; declare it anew instead';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER resource_states_new_is_pending BEFORE INSERT ON resource_states
    FOR EACH ROW WHEN (NEW.state <> 'pending') EXECUTE FUNCTION resource_states_refuse();
CREATE TRIGGER resource_states_keep_key BEFORE UPDATE OF node, module, resource ON resource_states
    FOR EACH ROW WHEN (OLD.node <> NEW.node OR OLD.module <> NEW.module OR OLD.resource <> NEW.resource)
    EXECUTE FUNCTION resource_states_refuse();

-- +goose StatementBegin
CREATE FUNCTION resource_states_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'resource_states: TRUNCATE would skip the transitions and the counts; DELETE instead';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER resource_states_no_truncate BEFORE TRUNCATE ON resource_states
    FOR EACH STATEMENT EXECUTE FUNCTION resource_states_no_truncate();

-- The lifecycle triggers work a statement at a time over its transition tables, so that a
-- fleet-wide write of many rows checks, records and counts them as sets.
-- +goose StatementBegin
CREATE FUNCTION resource_states_declared() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    SELECT node, module, resource, NULL, state, since, report_id, reason FROM new_rows;
    UPDATE nodes n SET resources_pending = n.resources_pending + c.added
    FROM (SELECT node, COUNT(*) AS added FROM new_rows GROUP BY node) c
    WHERE n.name = c.node;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER resource_states_declared AFTER INSERT ON resource_states
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION resource_states_declared();

-- +goose StatementBegin
CREATE FUNCTION resource_states_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM old_rows o JOIN new_rows n USING (node, module, resource)
        WHERE o.state <> n.state
          AND NOT EXISTS (SELECT 1 FROM lifecycle l WHERE l.from_state = o.state AND l.to_state = n.state)
    ) THEN
        RAISE EXCEPTION 'resource_states: transition not allowed by lifecycle';
    END IF;
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    SELECT n.node, n.module, n.resource, o.state, n.state,
           CASE WHEN n.since <> o.since THEN n.since ELSE hq_time(statement_timestamp()) END,
           n.report_id,
           CASE WHEN n.reason <> o.reason THEN n.reason ELSE 'set directly in the database' END
    FROM old_rows o JOIN new_rows n USING (node, module, resource)
    WHERE o.state <> n.state;
    UPDATE nodes x SET
        resources_applied = x.resources_applied + c.applied,
        resources_pending = x.resources_pending + c.pending,
        resources_failed = x.resources_failed + c.failed,
        resources_stuck = x.resources_stuck + c.stuck,
        resources_held = x.resources_held + c.held,
        resources_grouped_pending = x.resources_grouped_pending + c.grouped_pending
    FROM (
        SELECT n.node,
               SUM((n.state = 'applied')::int - (o.state = 'applied')::int) AS applied,
               SUM((n.state = 'pending')::int - (o.state = 'pending')::int) AS pending,
               SUM((n.state = 'failed')::int - (o.state = 'failed')::int) AS failed,
               SUM((n.state = 'stuck')::int - (o.state = 'stuck')::int) AS stuck,
               SUM((n.state = 'held')::int - (o.state = 'held')::int) AS held,
               SUM((n.state = 'grouped-pending')::int - (o.state = 'grouped-pending')::int) AS grouped_pending
        FROM old_rows o JOIN new_rows n USING (node, module, resource)
        WHERE o.state <> n.state
        GROUP BY n.node
    ) c
    WHERE x.name = c.node;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER resource_states_changed AFTER UPDATE ON resource_states
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION resource_states_changed();

-- +goose StatementBegin
CREATE FUNCTION resource_states_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    SELECT node, module, resource, state, 'removed', hq_time(statement_timestamp()), NULL, 'no longer declared'
    FROM old_rows;
    UPDATE nodes x SET
        resources_applied = x.resources_applied - c.applied,
        resources_pending = x.resources_pending - c.pending,
        resources_failed = x.resources_failed - c.failed,
        resources_stuck = x.resources_stuck - c.stuck,
        resources_held = x.resources_held - c.held,
        resources_grouped_pending = x.resources_grouped_pending - c.grouped_pending
    FROM (
        SELECT node,
               COUNT(*) FILTER (WHERE state = 'applied') AS applied,
               COUNT(*) FILTER (WHERE state = 'pending') AS pending,
               COUNT(*) FILTER (WHERE state = 'failed') AS failed,
               COUNT(*) FILTER (WHERE state = 'stuck') AS stuck,
               COUNT(*) FILTER (WHERE state = 'held') AS held,
               COUNT(*) FILTER (WHERE state = 'grouped-pending') AS grouped_pending
        FROM old_rows GROUP BY node
    ) c
    WHERE x.name = c.node;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER resource_states_removed AFTER DELETE ON resource_states
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION resource_states_removed();

CREATE TABLE sends (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    node         TEXT COLLATE "C"   NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
    generation   BIGINT NOT NULL,
    digest       TEXT COLLATE "C"   NOT NULL,
    resources    BIGINT NOT NULL,
    composed_by  TEXT COLLATE "C"   NOT NULL,
    sent_at      TEXT COLLATE "C"   NOT NULL,
    outcome      TEXT COLLATE "C"   NOT NULL DEFAULT 'sent' CHECK (outcome IN ('sent', 'applied', 'refused', 'superseded')),
    outcome_at   TEXT COLLATE "C",
    reason       TEXT COLLATE "C"   NOT NULL DEFAULT ''
);
CREATE INDEX sends_by_node ON sends (node, id);
CREATE INDEX sends_unanswered ON sends (node, generation) WHERE outcome = 'sent';
CREATE INDEX sends_refused ON sends (node, id) WHERE outcome = 'refused';

CREATE TABLE reports (
    id               BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    node             TEXT COLLATE "C"   NOT NULL REFERENCES nodes (name) ON DELETE CASCADE,
    generation       BIGINT NOT NULL,
    digest           TEXT COLLATE "C"   NOT NULL,
    summary          TEXT COLLATE "C"   NOT NULL,
    outcome_digest   TEXT COLLATE "C"   NOT NULL,
    applied          BIGINT NOT NULL DEFAULT 0,
    failed           BIGINT NOT NULL DEFAULT 0,
    stuck            BIGINT NOT NULL DEFAULT 0,
    held             BIGINT NOT NULL DEFAULT 0,
    grouped_pending  BIGINT NOT NULL DEFAULT 0,
    pending          BIGINT NOT NULL DEFAULT 0,
    started_at       TEXT COLLATE "C",
    finished_at      TEXT COLLATE "C",
    at               TEXT COLLATE "C"   NOT NULL,
    last_at          TEXT COLLATE "C"   NOT NULL,
    repeats          BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX reports_by_node ON reports (node, id);

CREATE TABLE node_registrations (
    id                BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    node              TEXT COLLATE "C"   NOT NULL,
    registered_at     TEXT COLLATE "C"   NOT NULL,
    deleted_at        TEXT COLLATE "C",
    first_generation  BIGINT NOT NULL DEFAULT 0,
    last_generation   BIGINT
);
CREATE INDEX node_registrations_by_node ON node_registrations (node, id);

CREATE TABLE web_sessions (
    id_hash     TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    created_at  TEXT COLLATE "C" NOT NULL,
    expires_at  TEXT COLLATE "C" NOT NULL
);
CREATE INDEX web_sessions_by_expiry ON web_sessions (expires_at);

CREATE TABLE drifts (
    id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    node       TEXT COLLATE "C"   NOT NULL,
    module     TEXT COLLATE "C"   NOT NULL,
    resource   TEXT COLLATE "C"   NOT NULL,
    at         TEXT COLLATE "C"   NOT NULL,
    report_id  BIGINT,
    detail     TEXT COLLATE "C"   NOT NULL DEFAULT ''
);
CREATE INDEX drifts_by_node ON drifts (node, id);
CREATE INDEX drifts_by_node_time ON drifts (node, at);
CREATE INDEX drifts_by_time ON drifts (at);

CREATE TABLE placements (
    name        TEXT COLLATE "C"   NOT NULL PRIMARY KEY,
    module      TEXT COLLATE "C"   NOT NULL REFERENCES modules (name),
    selector    TEXT COLLATE "C"   NOT NULL,
    taken       BIGINT NOT NULL DEFAULT 0,
    -- rollout is the policy a new revision of the module follows on the placement's nodes,
    -- a JSON object; '' moves every node at once.
    rollout     TEXT COLLATE "C"   NOT NULL DEFAULT '',
    created_at  TEXT COLLATE "C"   NOT NULL,
    updated_at  TEXT COLLATE "C"   NOT NULL
);
CREATE INDEX placements_by_module ON placements (module);

CREATE TABLE rollout_lifecycle (
    from_state  TEXT COLLATE "C" NOT NULL,
    to_state    TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (from_state, to_state)
);
INSERT INTO rollout_lifecycle (from_state, to_state) VALUES
    ('progressing', 'paused'),
    ('progressing', 'complete'),
    ('progressing', 'aborted'),
    ('paused', 'progressing'),
    ('paused', 'aborted');

CREATE TABLE rollouts (
    id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    module         TEXT COLLATE "C"   NOT NULL,
    placement      TEXT COLLATE "C"   NOT NULL,
    from_revision  BIGINT NOT NULL,
    to_revision    BIGINT NOT NULL,
    state          TEXT COLLATE "C"   NOT NULL DEFAULT 'progressing' CHECK (state IN ('progressing', 'paused', 'complete', 'aborted')),
    -- policy is the placement's rollout policy when the rollout started, a JSON object.
    policy         TEXT COLLATE "C"   NOT NULL,
    -- The counts are of rollout_nodes by state, kept by the rollout loop; failed counts the
    -- reverted too. forgiven is how many failures a resume set aside.
    nodes          BIGINT NOT NULL DEFAULT 0,
    done           BIGINT NOT NULL DEFAULT 0,
    in_flight      BIGINT NOT NULL DEFAULT 0,
    failed         BIGINT NOT NULL DEFAULT 0,
    forgiven       BIGINT NOT NULL DEFAULT 0,
    reason         TEXT COLLATE "C"   NOT NULL DEFAULT '',
    created_at     TEXT COLLATE "C"   NOT NULL,
    updated_at     TEXT COLLATE "C"   NOT NULL,
    ended_at       TEXT COLLATE "C"
);
CREATE INDEX rollouts_by_module ON rollouts (module, to_revision);
CREATE INDEX rollouts_active ON rollouts (state) WHERE state IN ('progressing', 'paused');

CREATE TABLE rollout_transitions (
    id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    rollout     BIGINT NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    from_state  TEXT COLLATE "C"   NOT NULL,
    to_state    TEXT COLLATE "C"   NOT NULL,
    reason      TEXT COLLATE "C"   NOT NULL,
    at          TEXT COLLATE "C"   NOT NULL
);
CREATE INDEX rollout_transitions_by_rollout ON rollout_transitions (rollout, id);

-- +goose StatementBegin
CREATE FUNCTION rollouts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO rollout_transitions (rollout, from_state, to_state, reason, at)
        VALUES (NEW.id, '', NEW.state, NEW.reason, NEW.created_at);
    ELSIF OLD.state <> NEW.state THEN
        IF NOT EXISTS (SELECT 1 FROM rollout_lifecycle l WHERE l.from_state = OLD.state AND l.to_state = NEW.state) THEN
            RAISE EXCEPTION 'rollout state change not in rollout_lifecycle';
        END IF;
        INSERT INTO rollout_transitions (rollout, from_state, to_state, reason, at)
        VALUES (NEW.id, OLD.state, NEW.state, NEW.reason, NEW.updated_at);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER rollouts_changed AFTER INSERT OR UPDATE OF state ON rollouts
    FOR EACH ROW EXECUTE FUNCTION rollouts_changed();

CREATE TABLE rollout_nodes (
    rollout        BIGINT NOT NULL REFERENCES rollouts (id) ON DELETE CASCADE,
    node           TEXT COLLATE "C"   NOT NULL,
    from_revision  BIGINT NOT NULL,
    wave           BIGINT NOT NULL DEFAULT 0,
    state          TEXT COLLATE "C"   NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'in-flight', 'done', 'failed', 'reverted')),
    generation     BIGINT NOT NULL DEFAULT 0,
    reason         TEXT COLLATE "C"   NOT NULL DEFAULT '',
    started_at     TEXT COLLATE "C",
    ended_at       TEXT COLLATE "C",
    PRIMARY KEY (rollout, node)
);
CREATE INDEX rollout_nodes_by_node ON rollout_nodes (node);

-- A node's generation moving (or a node appearing) is what a long-poll waits for; every
-- controller on the database listens on hq_generations_<schema> (hq_generations_public in the
-- default schema) and wakes the polls of the node named.
-- +goose StatementBegin
CREATE FUNCTION nodes_generation_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR OLD.generation IS DISTINCT FROM NEW.generation THEN
        PERFORM pg_notify('hq_generations_' || current_schema(), NEW.name);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER nodes_generation_notify AFTER INSERT OR UPDATE OF generation ON nodes
    FOR EACH ROW EXECUTE FUNCTION nodes_generation_notify();

-- Changes by hand take hq's write lock first (hq_lock_writes).
CREATE TRIGGER nodes_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON nodes
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER modules_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON modules
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER module_revisions_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON module_revisions
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER assignments_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON assignments
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER lifecycle_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON lifecycle
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER resource_states_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON resource_states
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER transitions_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON transitions
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER sends_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON sends
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER reports_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON reports
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER node_registrations_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON node_registrations
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER web_sessions_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON web_sessions
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER drifts_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON drifts
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER placements_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON placements
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER rollout_lifecycle_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON rollout_lifecycle
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER rollouts_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON rollouts
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER rollout_transitions_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON rollout_transitions
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();
CREATE TRIGGER rollout_nodes_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON rollout_nodes
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();

CREATE VIEW drift_by_resource AS
SELECT node, module, resource, COUNT(*) AS drifts, MIN(at) AS first_at, MAX(at) AS last_at
FROM drifts
WHERE at >= hq_time(now() - interval '24 hours')
GROUP BY node, module, resource;

CREATE VIEW node_overview AS
SELECT n.name AS node,
       n.generation,
       n.applied_generation,
       n.last_report_at,
       CAST(n.resources_applied + n.resources_pending + n.resources_failed + n.resources_stuck
           + n.resources_held + n.resources_grouped_pending AS BIGINT) AS resources,
       n.resources_applied AS applied,
       n.resources_pending AS pending,
       n.resources_failed AS failed,
       n.resources_stuck AS stuck,
       n.resources_held AS held,
       n.resources_grouped_pending AS grouped_pending
FROM nodes n
WHERE n.deleted_at IS NULL;

CREATE VIEW stuck_resources AS
SELECT r.node, r.module, r.resource,
       r.consecutive_failures AS attempts,
       r.failing_since,
       r.never_applied,
       r.last_error,
       (SELECT COUNT(*) FROM resource_states b
        WHERE b.node = r.node AND b.blocked_by <> '' AND b.blocked_by = r.module || '/' || r.resource) AS blocks
FROM resource_states r
WHERE r.state = 'stuck';

CREATE VIEW held_resources AS
SELECT r.node, r.module, r.resource, r.hold_reason, a.taken
FROM resource_states r
JOIN assignments a ON a.node = r.node AND a.module = r.module
WHERE r.state = 'held';

-- +goose Down
DROP VIEW held_resources, stuck_resources, node_overview, drift_by_resource;
DROP TABLE rollout_nodes, rollout_transitions, rollouts, rollout_lifecycle, placements, drifts,
    web_sessions, node_registrations, reports, sends, transitions, resource_states, lifecycle,
    assignments, module_revisions, modules, nodes;
DROP FUNCTION nodes_generation_notify, rollouts_changed, resource_states_removed,
    resource_states_changed, resource_states_declared, resource_states_refuse,
    resource_states_no_truncate, hq_lock_writes_trigger, hq_lock_writes, hq_time;
