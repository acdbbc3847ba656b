-- +goose Up
-- module_revision_resources: each revision's resources as rows (see the SQLite migration of
-- the same name). Revisions uploaded before it get their rows when hq next opens the database.
CREATE TABLE module_revision_resources (
    module       TEXT COLLATE "C"   NOT NULL,
    revision     BIGINT NOT NULL,
    resource     TEXT COLLATE "C"   NOT NULL,
    position     BIGINT NOT NULL,
    kind         TEXT COLLATE "C"   NOT NULL,
    spec_digest  TEXT COLLATE "C"   NOT NULL,
    group_name   TEXT COLLATE "C"   NOT NULL DEFAULT '',
    PRIMARY KEY (module, revision, resource),
    FOREIGN KEY (module, revision) REFERENCES module_revisions (module, revision) ON DELETE CASCADE
);
CREATE TRIGGER module_revision_resources_lock_writes BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON module_revision_resources
    FOR EACH STATEMENT EXECUTE FUNCTION hq_lock_writes_trigger();

-- +goose Down
DROP TABLE module_revision_resources;
