-- +goose Up
-- resource_states.held_found: what hostd found in a file it holds, which Take would overwrite,
-- when that is small text (at most 16 KiB, UTF-8 without NUL), so the node's page can preview
-- Take as a diff. held_found_omitted says why it is NULL when hostd left the content out:
-- 'binary', 'too-large' (over 16 KiB), 'too-many' (the report carried 256 KiB of held files
-- already). Both are NULL and '' when hostd did not say, and whenever the resource is not held:
-- the check refuses a row that leaves held and keeps them.
ALTER TABLE resource_states ADD COLUMN held_found TEXT COLLATE "C";
ALTER TABLE resource_states ADD COLUMN held_found_omitted TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE resource_states ADD CONSTRAINT resource_states_held_found
    CHECK (held_found_omitted IN ('', 'binary', 'too-large', 'too-many')
           AND (state = 'held' OR held_found IS NULL AND held_found_omitted = ''));

-- +goose Down
ALTER TABLE resource_states DROP CONSTRAINT resource_states_held_found;
ALTER TABLE resource_states DROP COLUMN held_found_omitted;
ALTER TABLE resource_states DROP COLUMN held_found;
