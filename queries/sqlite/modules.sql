-- name: ModuleRevisionResourcesInsert :exec
-- A revision's resources as rows (@rows, a JSON array of {name, kind, digest, position,
-- group}), in one statement; rows already there stay.
INSERT INTO module_revision_resources (module, revision, resource, position, kind, spec_digest, group_name)
SELECT @module, @revision, json_extract(r.value, '$.name'), json_extract(r.value, '$.position'),
       json_extract(r.value, '$.kind'), json_extract(r.value, '$.digest'), json_extract(r.value, '$.group')
FROM jsonb_each(CAST(@rows AS TEXT)) AS r
WHERE true
ON CONFLICT DO NOTHING;
