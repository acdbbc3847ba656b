-- name: PlacementUpsert :exec
INSERT INTO placements (name, module, selector, taken, rollout, created_at, updated_at)
VALUES (@name, @module, @selector, @taken, @rollout, @now, @now)
ON CONFLICT (name) DO UPDATE SET module = excluded.module, selector = excluded.selector,
    taken = excluded.taken, rollout = excluded.rollout, updated_at = excluded.updated_at;

-- name: PlacementGet :one
SELECT * FROM placements WHERE name = @name;

-- name: PlacementList :many
SELECT * FROM placements ORDER BY name;

-- name: PlacementDelete :execrows
DELETE FROM placements WHERE name = @name;

-- name: PlacementListPage :many
-- A page of placements by name after @after.
SELECT * FROM placements WHERE name > CAST(@after AS TEXT) ORDER BY name LIMIT CAST(@max AS BIGINT);

-- name: PlacementListByModule :many
SELECT * FROM placements WHERE module = @module ORDER BY name;
