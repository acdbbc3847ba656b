-- name: AssignmentGet :one
SELECT * FROM assignments WHERE node = @node AND module = @module;

-- name: AssignmentInsert :exec
INSERT INTO assignments (node, module, taken, assigned_at) VALUES (@node, @module, @taken, @assigned_at);

-- name: AssignmentSetTaken :exec
UPDATE assignments SET taken = @taken WHERE node = @node AND module = @module;

-- name: AssignmentDelete :execrows
DELETE FROM assignments WHERE node = @node AND module = @module;

-- name: AssignmentDeleteByNode :exec
-- A deleted node's assignments go; its resources leave with 'removed' transitions.
DELETE FROM assignments WHERE node = @node;

-- name: AssignmentListByNode :many
SELECT a.module, a.taken, a.assigned_at, m.revision
FROM assignments a JOIN modules m ON m.name = a.module
WHERE a.node = @node ORDER BY a.module;

-- name: AssignmentListAll :many
SELECT a.node, a.module, a.taken, m.revision
FROM assignments a JOIN modules m ON m.name = a.module
ORDER BY a.node, a.module;

-- name: AssignmentListByModule :many
SELECT node, taken FROM assignments WHERE module = @module ORDER BY node;

-- name: AssignmentDeclaration :many
-- The modules of a node's declaration, each at its newest revision, in a stable order.
SELECT a.module, a.taken, r.revision, r.resources
FROM assignments a
JOIN modules m ON m.name = a.module
JOIN module_revisions r ON r.module = m.name AND r.revision = m.revision
WHERE a.node = @node
ORDER BY a.module;

-- name: AssignmentCountByModule :many
SELECT module, COUNT(*) AS nodes FROM assignments GROUP BY module;
