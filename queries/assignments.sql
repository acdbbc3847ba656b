-- name: AssignmentGet :one
SELECT * FROM assignments WHERE node = @node AND module = @module;

-- name: AssignmentInsert :exec
INSERT INTO assignments (node, module, taken, assigned_at, revision, source)
VALUES (@node, @module, @taken, @assigned_at, @revision, @source);

-- name: AssignmentSetTaken :exec
UPDATE assignments SET taken = @taken WHERE node = @node AND module = @module;

-- name: AssignmentDelete :execrows
DELETE FROM assignments WHERE node = @node AND module = @module;

-- name: AssignmentDeleteByNode :exec
-- A deleted node's assignments go; its resources leave with 'removed' transitions.
DELETE FROM assignments WHERE node = @node;

-- name: AssignmentListByNode :many
SELECT module, taken, assigned_at, revision, source FROM assignments WHERE node = @node ORDER BY module;

-- name: AssignmentListByNodes :many
-- The assignments of some nodes (a JSON array of names), each at the revision it pins, with
-- who made and took it: columns of the row the primary key finds anyway, so no join.
SELECT node, module, taken, revision, source, assigned_at, assigned_by, taken_by FROM assignments
WHERE node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT)))
ORDER BY node, module;

-- name: AssignmentListByModule :many
SELECT node, taken FROM assignments WHERE module = @module ORDER BY node;

-- name: AssignmentDeclaration :many
-- The modules of a node's declaration, each at the revision its assignment pins, in a stable
-- order. The resources are decoded once per revision and kept, so only the pins are read here.
SELECT a.module, a.taken, a.revision FROM assignments a WHERE a.node = @node ORDER BY a.module;

-- name: AssignmentCountByModule :many
SELECT module, COUNT(*) AS nodes FROM assignments GROUP BY module;


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

-- name: ModuleListBehind :many
-- Modules with pins behind their newest revision that no rollout governs (nor a rollback of
-- their placement made while that revision was the newest): work a new revision has still
-- to do.
SELECT m.name, m.revision FROM modules m
WHERE EXISTS (SELECT 1 FROM assignments a WHERE a.module = m.name AND a.revision < m.revision
              AND NOT EXISTS (SELECT 1 FROM rollout_nodes rn JOIN rollouts r ON r.id = rn.rollout
                              WHERE rn.node = a.node AND r.module = a.module AND r.to_revision = m.revision)
              AND NOT EXISTS (SELECT 1 FROM rollouts rb
                              WHERE rb.placement = a.source AND rb.module = a.module AND rb.rollback_of = m.revision
                                AND rb.state <> 'aborted'))
ORDER BY m.name;

-- name: AssignmentOthersOfModule :many
-- The other modules, at their pins, of every node that has @module: what its paths meet.
SELECT o.node, o.module, o.revision FROM assignments o
WHERE o.node IN (SELECT a.node FROM assignments a WHERE a.module = @module) AND o.module <> @module
ORDER BY o.node, o.module;

-- name: AssignmentInsertOnNodes :exec
-- A module on every node named (a JSON array), at one revision, from one source.
INSERT INTO assignments (node, module, taken, assigned_at, revision, source)
SELECT value, @module, @taken, @assigned_at, @revision, @source FROM json_each(CAST(@nodes AS TEXT));

-- name: AssignmentDeleteOnNodes :exec
-- A source's assignments of a module off the nodes named (a JSON array); their resources go
-- with them.
DELETE FROM assignments
WHERE module = @module AND source = @source AND node IN (SELECT value FROM json_each(CAST(@nodes AS TEXT)));

-- name: AssignmentCountBySource :one
-- How many nodes a placement put its module on. A placement is never named operator, and
-- saying so lets the count read assignments_by_source alone.
SELECT COUNT(*) AS nodes FROM assignments WHERE source = @source AND source <> 'operator' AND module = @module;

-- name: AssignmentListBySource :many
-- What a placement put where, at which revision.
SELECT node, revision FROM assignments WHERE source = @source AND module = @module ORDER BY node;

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

-- name: AssignmentRevisionsOfPlacement :many
-- The revisions a placement's nodes are pinned to other than @to_revision, lowest first: where
-- a rollout to @to_revision moves them from.
SELECT DISTINCT a.revision FROM assignments a
WHERE a.source = @placement AND a.module = @module AND a.revision <> @to_revision
ORDER BY a.revision;


-- name: AssignmentSetAssignedBy :exec
UPDATE assignments SET assigned_by = @by WHERE node = @node AND module = @module;

-- name: AssignmentSetTakenBy :exec
UPDATE assignments SET taken_by = @by WHERE node = @node AND module = @module;
