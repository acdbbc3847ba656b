-- +goose Up
-- One trigger for each kind of change to resource_states instead of two or three. SQLite runs
-- a trigger as a program of its own for every row, and starting it costs about as much as a
-- small statement: the first apply of a 500-resource module ran three of them on every row.
-- What they do is unchanged: a resource enters as pending, a change of state follows the
-- lifecycle, every change is written to transitions, and the node's counts follow. A refusal
-- raised after the row changed undoes the whole statement, as the refusal before it did.

DROP TRIGGER resource_states_new_is_pending;
DROP TRIGGER resource_states_declared;
DROP TRIGGER resource_states_count_insert;
DROP TRIGGER resource_states_lifecycle;
DROP TRIGGER resource_states_changed;
DROP TRIGGER resource_states_count_update;
DROP TRIGGER resource_states_removed;
DROP TRIGGER resource_states_count_delete;

-- +goose StatementBegin
CREATE TRIGGER resource_states_declared AFTER INSERT ON resource_states
BEGIN
    SELECT RAISE(ABORT, 'resource_states: a resource enters the lifecycle as pending')
    WHERE NEW.state <> 'pending';
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    VALUES (NEW.node, NEW.module, NEW.resource, NULL, NEW.state, NEW.since, NEW.report_id, NEW.reason);
    UPDATE nodes SET resources_pending = resources_pending + 1 WHERE name = NEW.node;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER resource_states_changed AFTER UPDATE OF state ON resource_states
WHEN OLD.state <> NEW.state
BEGIN
    SELECT RAISE(ABORT, 'resource_states: transition not allowed by lifecycle')
    WHERE NOT EXISTS (SELECT 1 FROM lifecycle WHERE from_state = OLD.state AND to_state = NEW.state);
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    VALUES (NEW.node, NEW.module, NEW.resource, OLD.state, NEW.state,
            CASE WHEN NEW.since <> OLD.since THEN NEW.since ELSE strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END,
            NEW.report_id,
            CASE WHEN NEW.reason <> OLD.reason THEN NEW.reason ELSE 'set directly in the database' END);
    UPDATE nodes SET
        resources_applied = resources_applied + (NEW.state = 'applied') - (OLD.state = 'applied'),
        resources_pending = resources_pending + (NEW.state = 'pending') - (OLD.state = 'pending'),
        resources_failed = resources_failed + (NEW.state = 'failed') - (OLD.state = 'failed'),
        resources_stuck = resources_stuck + (NEW.state = 'stuck') - (OLD.state = 'stuck'),
        resources_held = resources_held + (NEW.state = 'held') - (OLD.state = 'held'),
        resources_grouped_pending = resources_grouped_pending + (NEW.state = 'grouped-pending') - (OLD.state = 'grouped-pending')
    WHERE name = NEW.node;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER resource_states_removed AFTER DELETE ON resource_states
BEGIN
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    VALUES (OLD.node, OLD.module, OLD.resource, OLD.state, 'removed',
            strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NULL, 'no longer declared');
    UPDATE nodes SET
        resources_applied = resources_applied - (OLD.state = 'applied'),
        resources_pending = resources_pending - (OLD.state = 'pending'),
        resources_failed = resources_failed - (OLD.state = 'failed'),
        resources_stuck = resources_stuck - (OLD.state = 'stuck'),
        resources_held = resources_held - (OLD.state = 'held'),
        resources_grouped_pending = resources_grouped_pending - (OLD.state = 'grouped-pending')
    WHERE name = OLD.node;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resource_states_removed;
DROP TRIGGER resource_states_changed;
DROP TRIGGER resource_states_declared;

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

-- +goose StatementBegin
CREATE TRIGGER resource_states_count_insert AFTER INSERT ON resource_states
BEGIN
    UPDATE nodes SET resources_pending = resources_pending + 1 WHERE name = NEW.node;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER resource_states_count_update AFTER UPDATE OF state ON resource_states
WHEN OLD.state <> NEW.state
BEGIN
    UPDATE nodes SET
        resources_applied = resources_applied + (NEW.state = 'applied') - (OLD.state = 'applied'),
        resources_pending = resources_pending + (NEW.state = 'pending') - (OLD.state = 'pending'),
        resources_failed = resources_failed + (NEW.state = 'failed') - (OLD.state = 'failed'),
        resources_stuck = resources_stuck + (NEW.state = 'stuck') - (OLD.state = 'stuck'),
        resources_held = resources_held + (NEW.state = 'held') - (OLD.state = 'held'),
        resources_grouped_pending = resources_grouped_pending + (NEW.state = 'grouped-pending') - (OLD.state = 'grouped-pending')
    WHERE name = NEW.node;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER resource_states_count_delete AFTER DELETE ON resource_states
BEGIN
    UPDATE nodes SET
        resources_applied = resources_applied - (OLD.state = 'applied'),
        resources_pending = resources_pending - (OLD.state = 'pending'),
        resources_failed = resources_failed - (OLD.state = 'failed'),
        resources_stuck = resources_stuck - (OLD.state = 'stuck'),
        resources_held = resources_held - (OLD.state = 'held'),
        resources_grouped_pending = resources_grouped_pending - (OLD.state = 'grouped-pending')
    WHERE name = OLD.node;
END;
-- +goose StatementEnd
