-- name: ContainerStatusRecord :exec
-- What a report says runs for a container resource, written only when it says something new
-- and only for a container resource the node has: a steady report writes nothing.
INSERT INTO container_status (node, module, resource, container_id, image_digest, started_at, restarts, health,
    spec_digest, earlier_spec, since, report_id)
SELECT r.node, r.module, r.resource, CAST(@container_id AS TEXT), CAST(@image_digest AS TEXT),
    CAST(sqlc.narg(started_at) AS TEXT), CAST(@restarts AS BIGINT), CAST(@health AS TEXT),
    CAST(@spec_digest AS TEXT), CAST(@earlier_spec AS BIGINT), CAST(@since AS TEXT), CAST(sqlc.narg(report_id) AS BIGINT)
FROM resource_states r
WHERE r.node = @node AND r.module = @module AND r.resource = @resource AND r.kind = 'container'
ON CONFLICT (node, module, resource) DO UPDATE SET
    container_id = excluded.container_id, image_digest = excluded.image_digest, started_at = excluded.started_at,
    restarts = excluded.restarts, health = excluded.health, spec_digest = excluded.spec_digest,
    earlier_spec = excluded.earlier_spec, since = excluded.since, report_id = excluded.report_id
WHERE container_status.container_id IS DISTINCT FROM excluded.container_id
   OR container_status.image_digest IS DISTINCT FROM excluded.image_digest
   OR container_status.started_at IS DISTINCT FROM excluded.started_at
   OR container_status.restarts IS DISTINCT FROM excluded.restarts
   OR container_status.health IS DISTINCT FROM excluded.health
   OR container_status.spec_digest IS DISTINCT FROM excluded.spec_digest
   OR container_status.earlier_spec IS DISTINCT FROM excluded.earlier_spec;
