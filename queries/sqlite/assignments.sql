-- name: AssignmentListByNodes :many
-- The assignments of some nodes (a JSON array of names), each at the revision it pins, with
-- who made and took it: columns of the row the primary key finds anyway, so no join.
SELECT node, module, taken, revision, source, assigned_at, assigned_by, taken_by FROM assignments
WHERE node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT)))
ORDER BY node, module;

-- name: AssignmentPinNodes :exec
UPDATE assignments SET revision = @revision
WHERE module = @module AND node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT)));

-- name: AssignmentListBehind :many
-- Pins of a module behind @revision, oldest revision first: the next nodes a new revision
-- reaches. A pin a rollout to that revision governs is the rollout's to move, and so are
-- the pins of a placement rolled back while @revision was the newest.
SELECT a.node, a.revision FROM assignments a
WHERE a.module = @module AND a.revision < @revision
  AND NOT EXISTS (SELECT 1 FROM rollout_nodes rn JOIN rollouts r ON r.id = rn.rollout
                  WHERE rn.node = a.node AND r.module = a.module AND r.to_revision = @revision)
  AND NOT EXISTS (SELECT 1 FROM rollouts rb
                  WHERE rb.placement = a.source AND rb.module = a.module AND rb.rollback_of = @revision AND rb.state <> 'aborted')
ORDER BY a.revision, a.node LIMIT @max;

-- name: AssignmentInsertOnNodes :exec
-- A module on every node named (a JSON array), at one revision, from one source.
INSERT INTO assignments (node, module, taken, assigned_at, revision, source)
SELECT value, @module, @taken, @assigned_at, @revision, @source FROM json_each(CAST(@nodes AS TEXT));

-- name: AssignmentDeleteOnNodes :exec
-- A source's assignments of a module off the nodes named (a JSON array); their resources go
-- with them.
DELETE FROM assignments
WHERE module = @module AND source = @source AND node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT)));

-- name: AssignmentListOfModuleOnNodes :many
-- Who already assigned a module on the nodes named (a JSON array).
SELECT node, source FROM assignments
WHERE module = @module AND node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT)))
ORDER BY node;

-- name: AssignmentListOrphaned :many
-- Assignments whose placement is gone (or now places another module): the next to take off.
SELECT a.node, a.module, a.source FROM assignments a
WHERE a.source <> 'operator'
  AND NOT EXISTS (SELECT 1 FROM placements p WHERE p.name = a.source AND p.module = a.module)
ORDER BY a.source, a.module, a.node LIMIT @max;

-- name: AssignmentListTakenDiffers :many
-- A placement's assignments not taken when the placement is: taking is per node too (an
-- operator's take stays when the placement is untaken).
SELECT node FROM assignments
WHERE source = @source AND module = @module AND taken < @taken ORDER BY node LIMIT @max;

-- name: AssignmentSetTakenOnNodes :exec
UPDATE assignments SET taken = @taken
WHERE module = @module AND source = @source AND node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT)));
