-- name: ModuleRevisionResourcesInsert :exec
-- A revision's resources as rows (@rows, a JSON array of {name, kind, digest, position,
-- group}), in one statement; rows already there stay.
INSERT INTO module_revision_resources (module, revision, resource, position, kind, spec_digest, group_name)
SELECT @module, @revision, r.value->>'name', (r.value->>'position')::bigint,
       r.value->>'kind', r.value->>'digest', r.value->>'group'
FROM json_array_elements(CAST(@rows AS text)::json) AS r(value)
ON CONFLICT DO NOTHING;
