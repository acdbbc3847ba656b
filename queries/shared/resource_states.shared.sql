-- name: ResourceStateListByNode :many
-- Every column but what a held file holds, which ResourceStateHeldFoundByNode reads for the
-- one page that shows it.
SELECT node, module, resource, kind, spec_digest, position, group_name, state, since, attempts, consecutive_failures,
       failing_since, never_applied, last_error, hold_reason, blocked_by, retry_requested, report_id, reason
FROM resource_states WHERE node = @node ORDER BY module, position;

-- name: ResourceStateRecord :exec
UPDATE resource_states
SET state = @state, since = @since, attempts = @attempts, consecutive_failures = @consecutive_failures,
    failing_since = @failing_since, never_applied = @never_applied, last_error = @last_error,
    hold_reason = @hold_reason, blocked_by = @blocked_by, retry_requested = @retry_requested,
    report_id = @report_id, reason = @reason, held_found = @held_found, held_found_omitted = @held_found_omitted
WHERE node = @node AND module = @module AND resource = @resource;

-- name: ResourceStateRequestRetry :execrows
-- Guarded by the states it leaves: zero rows means the resource is not failed or stuck (now).
UPDATE resource_states
SET retry_requested = 1, consecutive_failures = 0, failing_since = NULL,
    state = 'pending', since = @since, reason = 'retry requested by operator'
WHERE node = @node AND module = @module AND resource = @resource AND state IN ('failed', 'stuck');

-- name: ResourceStateRetryList :many
SELECT module, resource FROM resource_states WHERE node = @node AND retry_requested = 1 ORDER BY module, resource;

-- name: ResourceStateClearRetry :exec
UPDATE resource_states SET retry_requested = 0 WHERE node = @node AND retry_requested = 1;

-- name: ResourceStateBlockedCounts :many
-- How many resources each failing gate blocks, on every node.
SELECT node, blocked_by, COUNT(*) AS blocks FROM resource_states WHERE blocked_by <> ''
GROUP BY node, blocked_by;

-- name: ResourceStateListStuck :many
-- Every stuck resource on every node, for the scope of each (mesh-wide or node-local).
SELECT node, module, resource, never_applied FROM resource_states
WHERE state = 'stuck' AND state NOT IN ('applied', 'pending') ORDER BY module, resource, node;

-- name: ResourceStateListHeld :many
-- Every held resource on every node: what waits on a take.
SELECT node, module, resource FROM resource_states
WHERE state = 'held' AND state NOT IN ('applied', 'pending') ORDER BY node, module, resource;

-- name: ResourceStateListStuckByNode :many
SELECT module, resource FROM resource_states
WHERE node = @node AND state = 'stuck' AND state NOT IN ('applied', 'pending') ORDER BY module, resource;

-- name: ResourceStateGet :one
SELECT * FROM resource_states WHERE node = @node AND module = @module AND resource = @resource;

-- name: ResourceStateCountByNode :one
SELECT COUNT(*) FROM resource_states WHERE node = @node;

-- name: ResourceStateApplyAllPending :execrows
-- ResourceStateApplyPending for a report that applied every pending resource of the node: no
-- list to match against.
UPDATE resource_states
SET state = 'applied', since = @since, attempts = attempts + @attempt, consecutive_failures = 0,
    failing_since = NULL, never_applied = 0, last_error = '', hold_reason = '', blocked_by = '',
    report_id = @report_id, reason = 'applied'
WHERE node = @node AND state = 'pending';
