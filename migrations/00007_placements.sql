-- +goose Up
-- Fleets: nodes carry labels (which selectors address them by) and vars (values for
-- templates), each a JSON object of text; a placement assigns a module to every node its
-- selector matches, now and later. The assignments it makes record its name as their source.
ALTER TABLE nodes ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';
ALTER TABLE nodes ADD COLUMN vars TEXT NOT NULL DEFAULT '{}';

CREATE TABLE placements (
    name TEXT PRIMARY KEY,
    module TEXT NOT NULL REFERENCES modules (name),
    selector TEXT NOT NULL,
    taken INTEGER NOT NULL DEFAULT 0,
    -- rollout is the policy a new revision of the module follows on the placement's nodes,
    -- a JSON object; '' moves every node at once.
    rollout TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX placements_by_module ON placements (module);
-- What a placement put where: the membership its reconciliation compares with its selector.
CREATE INDEX assignments_by_source ON assignments (source, module) WHERE source <> 'operator';

-- +goose Down
DROP INDEX assignments_by_source;
DROP INDEX placements_by_module;
DROP TABLE placements;
ALTER TABLE nodes DROP COLUMN vars;
ALTER TABLE nodes DROP COLUMN labels;
