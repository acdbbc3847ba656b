-- +goose Up
-- A resource row belongs to an assignment of its module to its node. The foreign key that said
-- so checked it row by row: declaring a module's resources on a node looked the same
-- assignment up once for every resource. The declaring trigger now checks the
-- statement's rows as one set, and a statement trigger on assignments removes an assignment's
-- resources with it, as ON DELETE CASCADE did. The rules are the foreign key's, with its error
-- code (23503): a row inserted for no assignment is refused, an assignment still referred to
-- keeps its key, and assignments is not truncated (the foreign key refused that too).
--
-- The trigger that records a change of state reads the statement's old and new rows once rather
-- than three times: the check against the lifecycle, the transitions and the counts are one
-- statement over one join.
ALTER TABLE resource_states DROP CONSTRAINT resource_states_node_module_fkey;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION resource_states_declared() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    orphan RECORD;
BEGIN
    SELECT r.node, r.module INTO orphan
    FROM (SELECT DISTINCT node, module FROM new_rows) r
    WHERE NOT EXISTS (SELECT 1 FROM assignments a WHERE a.node = r.node AND a.module = r.module)
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'resource_states: module % is not assigned to node %', orphan.module, orphan.node
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    WITH recorded AS (
        INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
        SELECT node, module, resource, NULL, state, since, report_id, reason FROM new_rows
    )
    UPDATE nodes n SET resources_pending = n.resources_pending + c.added
    FROM (SELECT node, COUNT(*) AS added FROM new_rows GROUP BY node) c
    WHERE n.name = c.node;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION resource_states_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    refused BIGINT;
BEGIN
    -- A refusal raised after the writes undoes them with the statement that fired the trigger.
    WITH moved AS MATERIALIZED (
        SELECT n.node, n.module, n.resource, o.state AS from_state, n.state AS to_state,
               CASE WHEN n.since <> o.since THEN n.since ELSE hq_time(statement_timestamp()) END AS at,
               n.report_id,
               CASE WHEN n.reason <> o.reason THEN n.reason ELSE 'set directly in the database' END AS reason
        FROM old_rows o JOIN new_rows n USING (node, module, resource)
        WHERE o.state <> n.state
    ), recorded AS (
        INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
        SELECT node, module, resource, from_state, to_state, at, report_id, reason FROM moved
    ), counted AS (
        UPDATE nodes x SET
            resources_applied = x.resources_applied + c.applied,
            resources_pending = x.resources_pending + c.pending,
            resources_failed = x.resources_failed + c.failed,
            resources_stuck = x.resources_stuck + c.stuck,
            resources_held = x.resources_held + c.held,
            resources_grouped_pending = x.resources_grouped_pending + c.grouped_pending
        FROM (
            SELECT node,
                   SUM((to_state = 'applied')::int - (from_state = 'applied')::int) AS applied,
                   SUM((to_state = 'pending')::int - (from_state = 'pending')::int) AS pending,
                   SUM((to_state = 'failed')::int - (from_state = 'failed')::int) AS failed,
                   SUM((to_state = 'stuck')::int - (from_state = 'stuck')::int) AS stuck,
                   SUM((to_state = 'held')::int - (from_state = 'held')::int) AS held,
                   SUM((to_state = 'grouped-pending')::int - (from_state = 'grouped-pending')::int) AS grouped_pending
            FROM moved GROUP BY node
        ) c
        WHERE x.name = c.node
    )
    SELECT COUNT(*) INTO refused FROM moved m
    WHERE NOT EXISTS (SELECT 1 FROM lifecycle l WHERE l.from_state = m.from_state AND l.to_state = m.to_state);
    IF refused > 0 THEN
        RAISE EXCEPTION 'resource_states: transition not allowed by lifecycle';
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION assignments_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM resource_states r USING old_rows o WHERE r.node = o.node AND r.module = o.module;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER assignments_removed AFTER DELETE ON assignments
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION assignments_removed();

-- +goose StatementBegin
CREATE FUNCTION assignments_keep_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM resource_states WHERE node = OLD.node AND module = OLD.module) THEN
        RAISE EXCEPTION 'assignments: module % on node % has resources; it keeps its node and module', OLD.module, OLD.node
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER assignments_keep_key BEFORE UPDATE OF node, module ON assignments
    FOR EACH ROW WHEN (OLD.node <> NEW.node OR OLD.module <> NEW.module)
    EXECUTE FUNCTION assignments_keep_key();

-- +goose StatementBegin
CREATE FUNCTION assignments_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'assignments: TRUNCATE would leave their resources behind; DELETE instead'
        USING ERRCODE = 'foreign_key_violation';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER assignments_no_truncate BEFORE TRUNCATE ON assignments
    FOR EACH STATEMENT EXECUTE FUNCTION assignments_no_truncate();

-- +goose Down
DROP TRIGGER assignments_no_truncate ON assignments;
DROP TRIGGER assignments_keep_key ON assignments;
DROP TRIGGER assignments_removed ON assignments;
DROP FUNCTION assignments_no_truncate, assignments_keep_key, assignments_removed;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION resource_states_declared() RETURNS trigger LANGUAGE plpgsql AS $$
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
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION resource_states_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
ALTER TABLE resource_states ADD CONSTRAINT resource_states_node_module_fkey
    FOREIGN KEY (node, module) REFERENCES assignments (node, module) ON DELETE CASCADE;
