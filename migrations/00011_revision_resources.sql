-- +goose Up
-- module_revision_resources: each revision's resources as rows, one per resource, with its
-- place in the module and the digest of its spec: what assigning the revision declares on a
-- node. hq writes them with the revision, and an assignment copies them into resource_states,
-- where it used to take the revision's JSON apart again for every node. The JSON in
-- module_revisions stays what was uploaded. Revisions uploaded before this table get their
-- rows when hq next opens the database: a digest is computed by hq, not by SQL.
CREATE TABLE module_revision_resources (
    module       TEXT    NOT NULL,
    revision     INTEGER NOT NULL,
    resource     TEXT    NOT NULL,
    position     INTEGER NOT NULL,
    kind         TEXT    NOT NULL,
    spec_digest  TEXT    NOT NULL,
    group_name   TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (module, revision, resource),
    FOREIGN KEY (module, revision) REFERENCES module_revisions (module, revision) ON DELETE CASCADE
) WITHOUT ROWID;

-- The check that a resource enters as pending moves into the transition's insert: a statement
-- of its own in the trigger cost about an eighth of a 500-resource assignment. The refusal is
-- the same, and it still undoes the whole statement.
DROP TRIGGER resource_states_declared;

-- +goose StatementBegin
CREATE TRIGGER resource_states_declared AFTER INSERT ON resource_states
BEGIN
    INSERT INTO transitions (node, module, resource, from_state, to_state, at, report_id, reason)
    VALUES (NEW.node, NEW.module, NEW.resource, NULL,
            CASE WHEN NEW.state = 'pending' THEN NEW.state
                 ELSE RAISE(ABORT, 'resource_states: a resource enters the lifecycle as pending') END,
            NEW.since, NEW.report_id, NEW.reason);
    UPDATE nodes SET resources_pending = resources_pending + 1 WHERE name = NEW.node;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER resource_states_declared;

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

DROP TABLE module_revision_resources;
