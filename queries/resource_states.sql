-- name: ResourceStateInsert :exec
INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, group_name, since, reason)
VALUES (@node, @module, @resource, @kind, @spec_digest, @position, @group_name, @since, @reason);

-- name: ResourceStateListByNode :many
SELECT * FROM resource_states WHERE node = @node ORDER BY module, position;

-- name: ResourceStateListByAssignment :many
SELECT * FROM resource_states WHERE node = @node AND module = @module ORDER BY position;

-- name: ResourceStateDelete :exec
DELETE FROM resource_states WHERE node = @node AND module = @module AND resource = @resource;

-- name: ResourceStateRedeclare :exec
-- A changed spec starts over: pending, counters reset, never applied at this spec.
UPDATE resource_states
SET kind = @kind, spec_digest = @spec_digest, position = @position, group_name = @group_name,
    state = 'pending', since = @since, attempts = 0, consecutive_failures = 0, failing_since = NULL,
    never_applied = 1, last_error = '', hold_reason = '', blocked_by = '', report_id = NULL, reason = @reason
WHERE node = @node AND module = @module AND resource = @resource;

-- name: ResourceStateMove :exec
-- An unchanged spec whose place in its module changed.
UPDATE resource_states SET position = @position, group_name = @group_name
WHERE node = @node AND module = @module AND resource = @resource;

-- name: ResourceStateRecord :exec
UPDATE resource_states
SET state = @state, since = @since, attempts = @attempts, consecutive_failures = @consecutive_failures,
    failing_since = @failing_since, never_applied = @never_applied, last_error = @last_error,
    hold_reason = @hold_reason, blocked_by = @blocked_by, retry_requested = @retry_requested,
    report_id = @report_id, reason = @reason
WHERE node = @node AND module = @module AND resource = @resource;

-- name: ResourceStateRequestRetry :execrows
-- Guarded by the states it leaves: zero rows means the resource is not failed or stuck (now).
UPDATE resource_states
SET retry_requested = 1, consecutive_failures = 0, failing_since = NULL,
    state = 'pending', since = @since, reason = 'retry requested by operator'
WHERE node = @node AND module = @module AND resource = @resource AND state IN ('failed', 'stuck');

-- name: ResourceStateRetryList :many
SELECT module, resource FROM resource_states WHERE node = @node AND retry_requested = 1;

-- name: ResourceStateClearRetry :exec
UPDATE resource_states SET retry_requested = 0 WHERE node = @node AND retry_requested = 1;

-- name: ResourceStateCounts :many
-- Resources per node and state, for every node at once.
SELECT node, state, COUNT(*) AS count FROM resource_states GROUP BY node, state;

-- name: ResourceStateListNotApplied :many
-- Everything that is not applied, on every node: what status lines are made of.
SELECT * FROM resource_states WHERE state <> 'applied' ORDER BY node, module, position;

-- name: ResourceStateListStuck :many
-- Every stuck resource on every node, for the scope of each (mesh-wide or node-local).
SELECT node, module, resource FROM resource_states WHERE state = 'stuck' ORDER BY module, resource, node;

-- name: ResourceStateCountsByNode :many
SELECT state, COUNT(*) AS count FROM resource_states WHERE node = @node GROUP BY state;

-- name: ResourceStateListStuckByNode :many
SELECT module, resource FROM resource_states WHERE node = @node AND state = 'stuck' ORDER BY module, resource;

-- name: ResourceStateGet :one
SELECT * FROM resource_states WHERE node = @node AND module = @module AND resource = @resource;

-- name: ResourceStateListUnsettledByNode :many
-- A node's resources that are not applied: the only ones a plain "applied" result can move.
SELECT * FROM resource_states WHERE node = @node AND state <> 'applied';

-- name: ResourceStateRefsByNode :many
-- What a node's current declaration names: a report may speak of nothing else.
SELECT module, resource FROM resource_states WHERE node = @node;

-- name: ResourceStateCountByNode :one
SELECT COUNT(*) FROM resource_states WHERE node = @node;
