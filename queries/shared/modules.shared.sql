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

-- name: ModuleRevisionsWithoutResources :many
-- Revisions with resources but no rows of them: uploaded before module_revision_resources.
SELECT v.module, v.revision, v.resources FROM module_revisions v
WHERE v.resource_count > 0
  AND NOT EXISTS (SELECT 1 FROM module_revision_resources r WHERE r.module = v.module AND r.revision = v.revision)
ORDER BY v.module, v.revision;

-- name: ModuleRevisionGet :one
SELECT * FROM module_revisions WHERE module = @module AND revision = @revision;

-- name: ModuleOverviewList :many
-- A page of modules by name after @after, each with how many nodes it is assigned to and how
-- many placements place it.
SELECT m.name, m.revision, m.created_at, m.updated_at,
       (SELECT COUNT(*) FROM assignments a WHERE a.module = m.name) AS nodes,
       (SELECT COUNT(*) FROM placements p WHERE p.module = m.name) AS placements
FROM modules m
WHERE m.name > CAST(@after AS TEXT)
ORDER BY m.name
LIMIT CAST(@max AS BIGINT);

-- name: ModuleOverviewGet :one
-- One module as ModuleOverviewList shows it.
SELECT m.name, m.revision, m.created_at, m.updated_at,
       (SELECT COUNT(*) FROM assignments a WHERE a.module = m.name) AS nodes,
       (SELECT COUNT(*) FROM placements p WHERE p.module = m.name) AS placements
FROM modules m
WHERE m.name = @name;

-- name: ModuleRevisionListPage :many
-- A page of a module's revisions, newest first, older than @before (0 for the first page),
-- without their resources.
SELECT revision, resource_count, digest, created_at, pushed_by, message FROM module_revisions
WHERE module = @module AND (CAST(@before AS BIGINT) = 0 OR revision < CAST(@before AS BIGINT))
ORDER BY revision DESC
LIMIT CAST(@max AS BIGINT);

-- name: ModuleRevisionSetAuthor :exec
UPDATE module_revisions SET pushed_by = @pushed_by, message = @message WHERE module = @module AND revision = @revision;
