-- +goose Up
-- drifts: every change made on a machine behind hostd's back that hostd put back, with what
-- differed, written in the transaction of the report that said so. History, pruned like the
-- others (HQ_RETAIN).
CREATE TABLE drifts (
    id         INTEGER PRIMARY KEY,
    node       TEXT    NOT NULL,
    module     TEXT    NOT NULL,
    resource   TEXT    NOT NULL,
    at         TEXT    NOT NULL,
    report_id  INTEGER,
    detail     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX drifts_by_node ON drifts (node, id);
-- A node's lines and the mesh's list ask what drifted lately.
CREATE INDEX drifts_by_node_time ON drifts (node, at);
CREATE INDEX drifts_by_time ON drifts (at);

-- drift_by_resource: how often each resource drifted on each node in the last 24 hours.
CREATE VIEW drift_by_resource AS
SELECT node, module, resource, COUNT(*) AS drifts, MIN(at) AS first_at, MAX(at) AS last_at
FROM drifts
WHERE at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-24 hours')
GROUP BY node, module, resource;

-- +goose Down
DROP VIEW drift_by_resource;
DROP TABLE drifts;
