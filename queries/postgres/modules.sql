-- name: ModuleGet :one
SELECT * FROM modules WHERE name = @name;

-- name: ModuleList :many
SELECT * FROM modules ORDER BY name;

-- name: ModuleUpsert :one
INSERT INTO modules (name, revision, created_at, updated_at) VALUES (@name, 1, @now, @now)
ON CONFLICT (name) DO UPDATE SET revision = modules.revision + 1, updated_at = excluded.updated_at
RETURNING revision;

-- name: ModuleRevisionInsert :exec
INSERT INTO module_revisions (module, revision, resources, resource_count, digest, created_at)
VALUES (@module, @revision, @resources, @resource_count, @digest, @created_at);

-- name: ModuleRevisionGet :one
SELECT * FROM module_revisions WHERE module = @module AND revision = @revision;
