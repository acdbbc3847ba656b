-- +goose Up
-- Sized for fleets: index what operators ask about (the resources that are not fine), not
-- every row; count every node's resources by state as they change, so the status of 10,000
-- nodes is read from 10,000 rows rather than from millions; pin the revision each assignment
-- declares, so a new revision can reach a fleet in steps.

-- Most of a fleet's rows are applied, and during a change, pending: the questions the indexes
-- serve (what is failed, stuck, held or waiting for its group) are about the others. Queries
-- that use these indexes repeat the index's WHERE term, which SQLite needs to see.
DROP INDEX resource_states_by_state;
DROP INDEX resource_states_by_node_state;
CREATE INDEX resource_states_not_fine ON resource_states (state, module, resource)
    WHERE state NOT IN ('applied', 'pending');
CREATE INDEX resource_states_not_fine_by_node ON resource_states (node, state)
    WHERE state NOT IN ('applied', 'pending');
-- What a failing gate blocks: pending rows that name it.
CREATE INDEX resource_states_blocked ON resource_states (node, blocked_by) WHERE blocked_by <> '';

-- nodes: resources by state, kept by the triggers below (also for changes made by hand).
ALTER TABLE nodes ADD COLUMN resources_applied INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN resources_pending INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN resources_failed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN resources_stuck INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN resources_held INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN resources_grouped_pending INTEGER NOT NULL DEFAULT 0;

UPDATE nodes SET
    resources_applied = (SELECT COUNT(*) FROM resource_states r WHERE r.node = nodes.name AND r.state = 'applied'),
    resources_pending = (SELECT COUNT(*) FROM resource_states r WHERE r.node = nodes.name AND r.state = 'pending'),
    resources_failed = (SELECT COUNT(*) FROM resource_states r WHERE r.node = nodes.name AND r.state = 'failed'),
    resources_stuck = (SELECT COUNT(*) FROM resource_states r WHERE r.node = nodes.name AND r.state = 'stuck'),
    resources_held = (SELECT COUNT(*) FROM resource_states r WHERE r.node = nodes.name AND r.state = 'held'),
    resources_grouped_pending = (SELECT COUNT(*) FROM resource_states r WHERE r.node = nodes.name AND r.state = 'grouped-pending');

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

-- assignments: the revision each declares. A new revision moves the pins, all at once or in
-- waves; until its pin moves a node keeps the revision it has. source says who assigned it:
-- 'operator', or the placement's name.
ALTER TABLE assignments ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE assignments ADD COLUMN source TEXT NOT NULL DEFAULT 'operator';
UPDATE assignments SET revision = (SELECT m.revision FROM modules m WHERE m.name = assignments.module);
-- The pins a revision has not reached yet.
CREATE INDEX assignments_by_module_revision ON assignments (module, revision);

-- +goose Down
DROP INDEX assignments_by_module_revision;
ALTER TABLE assignments DROP COLUMN source;
ALTER TABLE assignments DROP COLUMN revision;
DROP TRIGGER resource_states_count_delete;
DROP TRIGGER resource_states_count_update;
DROP TRIGGER resource_states_count_insert;
ALTER TABLE nodes DROP COLUMN resources_grouped_pending;
ALTER TABLE nodes DROP COLUMN resources_held;
ALTER TABLE nodes DROP COLUMN resources_stuck;
ALTER TABLE nodes DROP COLUMN resources_failed;
ALTER TABLE nodes DROP COLUMN resources_pending;
ALTER TABLE nodes DROP COLUMN resources_applied;
DROP INDEX resource_states_blocked;
DROP INDEX resource_states_not_fine_by_node;
DROP INDEX resource_states_not_fine;
CREATE INDEX resource_states_by_node_state ON resource_states (node, state);
CREATE INDEX resource_states_by_state ON resource_states (state, module, resource);
