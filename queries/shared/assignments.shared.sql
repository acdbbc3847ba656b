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

-- name: AssignmentListByModule :many
SELECT node, taken FROM assignments WHERE module = @module ORDER BY node;

-- name: AssignmentDeclaration :many
-- The modules of a node's declaration, each at the revision its assignment pins, in a stable
-- order. The resources are decoded once per revision and kept, so only the pins are read here.
SELECT a.module, a.taken, a.revision FROM assignments a WHERE a.node = @node ORDER BY a.module;

-- name: AssignmentCountByModule :many
SELECT module, COUNT(*) AS nodes FROM assignments GROUP BY module;

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

-- name: AssignmentCountBySource :one
-- How many nodes a placement put its module on. A placement is never named operator, and
-- saying so lets the count read assignments_by_source alone.
SELECT COUNT(*) AS nodes FROM assignments WHERE source = @source AND source <> 'operator' AND module = @module;

-- name: AssignmentListBySource :many
-- What a placement put where, at which revision.
SELECT node, revision FROM assignments WHERE source = @source AND module = @module ORDER BY node;

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
