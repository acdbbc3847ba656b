-- +goose Up
-- Views for operators reading the database with sqlite3; hq itself does not depend on them.

-- node_overview: one row per node, with its resources counted by state.
CREATE VIEW node_overview AS
SELECT n.name AS node,
       n.generation,
       n.applied_generation,
       n.last_report_at,
       COUNT(r.resource) AS resources,
       COUNT(*) FILTER (WHERE r.state = 'applied') AS applied,
       COUNT(*) FILTER (WHERE r.state = 'pending') AS pending,
       COUNT(*) FILTER (WHERE r.state = 'failed') AS failed,
       COUNT(*) FILTER (WHERE r.state = 'stuck') AS stuck,
       COUNT(*) FILTER (WHERE r.state = 'held') AS held,
       COUNT(*) FILTER (WHERE r.state = 'grouped-pending') AS grouped_pending
FROM nodes n
LEFT JOIN resource_states r ON r.node = n.name
GROUP BY n.name, n.generation, n.applied_generation, n.last_report_at;

-- stuck_resources: every stuck resource, with what its failure blocks on its node.
CREATE VIEW stuck_resources AS
SELECT r.node, r.module, r.resource,
       r.consecutive_failures AS attempts,
       r.failing_since,
       r.never_applied,
       r.last_error,
       (SELECT COUNT(*) FROM resource_states b
        WHERE b.node = r.node AND b.blocked_by = r.module || '/' || r.resource) AS blocks
FROM resource_states r
WHERE r.state = 'stuck';

-- held_resources: what hosts refuse to touch until a module is taken, with their reasons.
CREATE VIEW held_resources AS
SELECT r.node, r.module, r.resource, r.hold_reason, a.taken
FROM resource_states r
JOIN assignments a ON a.node = r.node AND a.module = r.module
WHERE r.state = 'held';

-- +goose Down
DROP VIEW held_resources;
DROP VIEW stuck_resources;
DROP VIEW node_overview;
