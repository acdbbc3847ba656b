-- +goose Up
-- drifts.found: what hostd found in a drifted file whose declared and found contents are both
-- small text (at most 16 KiB, UTF-8 without NUL), so a page can show what changed as a diff;
-- NULL for any other drift, and for drifts recorded before this column.
ALTER TABLE drifts ADD COLUMN found TEXT;

-- +goose Down
ALTER TABLE drifts DROP COLUMN found;
