-- +goose Up
-- A deleted node keeps its history: the row stays, marked deleted_at, its token void, its
-- assignments gone. Registering the name again continues its generations above the old ones.

ALTER TABLE nodes ADD COLUMN deleted_at TEXT;

-- node_registrations: every time a name was registered, and when it was deleted. A history row
-- (transitions, reports, sends) of the node belongs to the registration whose [registered_at,
-- deleted_at) holds its time; generations never repeat across registrations of one name.
CREATE TABLE node_registrations (
    id                INTEGER PRIMARY KEY,
    node              TEXT    NOT NULL,
    registered_at     TEXT    NOT NULL,
    deleted_at        TEXT,
    first_generation  INTEGER NOT NULL DEFAULT 0,
    last_generation   INTEGER
);
CREATE INDEX node_registrations_by_node ON node_registrations (node, id);

INSERT INTO node_registrations (node, registered_at, first_generation)
SELECT name, created_at, 0 FROM nodes;

-- +goose Down
DROP TABLE node_registrations;
ALTER TABLE nodes DROP COLUMN deleted_at;
