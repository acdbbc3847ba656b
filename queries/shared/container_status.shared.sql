-- name: ContainerStatusListByNode :many
SELECT * FROM container_status WHERE node = @node ORDER BY module, resource;
