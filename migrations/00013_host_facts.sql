-- +goose Up
-- What each host says of itself in its first report after hostd starts: the hostd it runs,
-- its operating system and architecture, and when it booted. Empty (NULL for booted_at) until
-- the node's hostd has said.
ALTER TABLE nodes ADD COLUMN hostd_version TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN os TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN arch TEXT NOT NULL DEFAULT '';
ALTER TABLE nodes ADD COLUMN booted_at TEXT;

-- +goose Down
ALTER TABLE nodes DROP COLUMN booted_at;
ALTER TABLE nodes DROP COLUMN arch;
ALTER TABLE nodes DROP COLUMN os;
ALTER TABLE nodes DROP COLUMN hostd_version;
