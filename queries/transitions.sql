-- name: TransitionListByNode :many
SELECT * FROM transitions WHERE node = @node ORDER BY id DESC LIMIT @max;

-- name: TransitionDeleteByNode :exec
DELETE FROM transitions WHERE node = @node;
