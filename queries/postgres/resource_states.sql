-- name: ResourceStateHeldFoundByNode :many
-- What hostd said it found in the node's held files.
SELECT module, resource, held_found, held_found_omitted FROM resource_states
WHERE node = @node AND state = 'held' AND state NOT IN ('applied', 'pending') AND (held_found IS NOT NULL OR held_found_omitted <> '')
ORDER BY module, resource;

-- name: ResourceStateListNotFineByNodes :many
-- The same for some nodes (a JSON array of names), but for what a held file holds: a page of
-- nodes waiting on take would read every held file of each.
SELECT node, module, resource, kind, spec_digest, position, group_name, state, since, attempts, consecutive_failures,
       failing_since, never_applied, last_error, hold_reason, blocked_by, retry_requested, report_id, reason
FROM resource_states
WHERE node IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json)) AND state NOT IN ('applied', 'pending')
ORDER BY node, module, position;

-- name: ResourceStateBlockedCountsByNodes :many
-- How many resources each failing gate blocks, on some nodes.
SELECT node, blocked_by, COUNT(*) AS blocks FROM resource_states
WHERE node IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json)) AND blocked_by <> ''
GROUP BY node, blocked_by;

-- name: ResourceStateListNotFineByNode :many
-- A node's failed, stuck, held and grouped-pending resources.
SELECT * FROM resource_states WHERE node = @node AND state NOT IN ('applied', 'pending');

-- name: ResourceStateApplyPending :execrows
-- The first apply of a fleet in one statement per node: pending resources a report found or
-- made as declared (@refs, a JSON array of "module/name") become applied. It moves exactly what
-- advance would for a plain "applied" result; the triggers write the transitions and counts.
UPDATE resource_states
SET state = 'applied', since = @since, attempts = attempts + @attempt, consecutive_failures = 0,
    failing_since = NULL, never_applied = 0, last_error = '', hold_reason = '', blocked_by = '',
    report_id = @report_id, reason = 'applied'
WHERE node = @node AND state = 'pending'
  AND module || '/' || resource IN (SELECT value FROM json_array_elements_text(CAST(@refs AS text)::json));

-- name: ResourceStateCountAttempts :exec
-- Applied resources a report changed again (an attempt that succeeded): counted, nothing moves.
UPDATE resource_states SET attempts = attempts + 1, report_id = @report_id
WHERE node = @node AND state = 'applied'
  AND module || '/' || resource IN (SELECT value FROM json_array_elements_text(CAST(@refs AS text)::json));

-- name: ResourceStateApplyPendingByKey :execrows
-- ResourceStateApplyPending for a few refs: each is split into its module and name, and its
-- row is found by its key. Past about a quarter of the node's rows, reading every row of the
-- node (ResourceStateApplyPending) is cheaper than as many lookups.
UPDATE resource_states
SET state = 'applied', since = @since, attempts = attempts + @attempt, consecutive_failures = 0,
    failing_since = NULL, never_applied = 0, last_error = '', hold_reason = '', blocked_by = '',
    report_id = @report_id, reason = 'applied'
WHERE node = @node AND state = 'pending'
  AND (module, resource) IN (SELECT split_part(value, '/', 1), substr(value, strpos(value, '/') + 1) FROM json_array_elements_text(CAST(@refs AS text)::json));

-- name: ResourceStateCountAttemptsByKey :exec
-- ResourceStateCountAttempts for a few refs, found by their key as ResourceStateApplyPendingByKey.
UPDATE resource_states SET attempts = attempts + 1, report_id = @report_id
WHERE node = @node AND state = 'applied'
  AND (module, resource) IN (SELECT split_part(value, '/', 1), substr(value, strpos(value, '/') + 1) FROM json_array_elements_text(CAST(@refs AS text)::json));

-- name: ResourceStateDeclare :exec
-- Declares a revision's resources on nodes (@nodes, a JSON array of names) in one statement,
-- copied from the revision's rows: all of them (@every = 1), or those @names lists.
INSERT INTO resource_states (node, module, resource, kind, spec_digest, position, group_name, since, reason)
SELECT n.value, r.module, r.resource, r.kind, r.spec_digest, r.position, r.group_name, @since, @reason
FROM json_array_elements_text(CAST(@nodes AS text)::json) AS n(value)
CROSS JOIN module_revision_resources AS r
WHERE r.module = @module AND r.revision = @revision
  AND (CAST(@every AS bigint) = 1 OR r.resource IN (SELECT json_array_elements_text(CAST(@names AS text)::json)));

-- name: ResourceStateRedeclareOnNodes :exec
-- A changed spec starts over on every node named: pending, counters reset. never_applied is
-- kept: it says the resource never once applied on the node, whatever the spec.
UPDATE resource_states
SET kind = @kind, spec_digest = @spec_digest, position = @position, group_name = @group_name,
    state = 'pending', since = @since, attempts = 0, consecutive_failures = 0, failing_since = NULL,
    last_error = '', hold_reason = '', blocked_by = '', report_id = NULL, reason = @reason,
    held_found = NULL, held_found_omitted = ''
WHERE module = @module AND resource = @resource AND node IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json));

-- name: ResourceStateMoveOnNodes :exec
-- An unchanged spec whose place in its module changed, on every node named.
UPDATE resource_states SET position = @position, group_name = @group_name
WHERE module = @module AND resource = @resource AND node IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json));

-- name: ResourceStateRemoveOnNodes :exec
-- Resources (@names) no longer declared, on every node named; the trigger records them removed.
DELETE FROM resource_states
WHERE module = @module AND node IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json))
  AND resource IN (SELECT value FROM json_array_elements_text(CAST(@names AS text)::json));
