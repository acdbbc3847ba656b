-- +goose Up
-- The operator views, read as a fleet's database wants them read: node_overview from the
-- counts each node's row keeps, the others through the indexes over what is not fine. Same
-- names, same columns; only how they are computed changes.

DROP VIEW node_overview;
CREATE VIEW node_overview AS
SELECT n.name AS node,
       n.generation,
       n.applied_generation,
       n.last_report_at,
       n.resources_applied + n.resources_pending + n.resources_failed + n.resources_stuck
           + n.resources_held + n.resources_grouped_pending AS resources,
       n.resources_applied AS applied,
       n.resources_pending AS pending,
       n.resources_failed AS failed,
       n.resources_stuck AS stuck,
       n.resources_held AS held,
       n.resources_grouped_pending AS grouped_pending
FROM nodes n
WHERE n.deleted_at IS NULL;

DROP VIEW stuck_resources;
CREATE VIEW stuck_resources AS
SELECT r.node, r.module, r.resource,
       r.consecutive_failures AS attempts,
       r.failing_since,
       r.never_applied,
       r.last_error,
       (SELECT COUNT(*) FROM resource_states b
        WHERE b.node = r.node AND b.blocked_by <> '' AND b.blocked_by = r.module || '/' || r.resource) AS blocks
FROM resource_states r
WHERE r.state = 'stuck' AND r.state NOT IN ('applied', 'pending');

DROP VIEW held_resources;
CREATE VIEW held_resources AS
SELECT r.node, r.module, r.resource, r.hold_reason, a.taken
FROM resource_states r
JOIN assignments a ON a.node = r.node AND a.module = r.module
WHERE r.state = 'held' AND r.state NOT IN ('applied', 'pending');

-- A node's refused sends: a few among millions of sends.
CREATE INDEX sends_refused ON sends (node, id) WHERE outcome = 'refused';

-- +goose Down
DROP INDEX sends_refused;
DROP VIEW held_resources;
DROP VIEW stuck_resources;
DROP VIEW node_overview;
CREATE VIEW node_overview AS
SELECT n.name AS node, n.generation, n.applied_generation, n.last_report_at,
       COUNT(r.resource) AS resources,
       COUNT(*) FILTER (WHERE r.state = 'applied') AS applied,
       COUNT(*) FILTER (WHERE r.state = 'pending') AS pending,
       COUNT(*) FILTER (WHERE r.state = 'failed') AS failed,
       COUNT(*) FILTER (WHERE r.state = 'stuck') AS stuck,
       COUNT(*) FILTER (WHERE r.state = 'held') AS held,
       COUNT(*) FILTER (WHERE r.state = 'grouped-pending') AS grouped_pending
FROM nodes n LEFT JOIN resource_states r ON r.node = n.name
GROUP BY n.name, n.generation, n.applied_generation, n.last_report_at;
CREATE VIEW stuck_resources AS
SELECT r.node, r.module, r.resource, r.consecutive_failures AS attempts, r.failing_since, r.never_applied, r.last_error,
       (SELECT COUNT(*) FROM resource_states b WHERE b.node = r.node AND b.blocked_by = r.module || '/' || r.resource) AS blocks
FROM resource_states r WHERE r.state = 'stuck';
CREATE VIEW held_resources AS
SELECT r.node, r.module, r.resource, r.hold_reason, a.taken
FROM resource_states r JOIN assignments a ON a.node = r.node AND a.module = r.module
WHERE r.state = 'held';
