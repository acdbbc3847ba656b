-- +goose Up
-- container_status: what runs for each container resource on each node, as its hostd last
-- reported it: the engine's id of the container, the digest of its image, when its process
-- last started (NULL when it never did), the restarts hostd saw since it created it, its health
-- (healthy, unhealthy, or none when it declares no check) and the digest of the spec it was
-- made from, with earlier_spec 1 when that is not the spec declared now (a group rolled back,
-- or the change has not applied yet). Written only when a report says something new of it, so
-- a steady report writes nothing here; since is when it was. A row goes with its resource.
CREATE TABLE container_status (
    node         TEXT    NOT NULL,
    module       TEXT    NOT NULL,
    resource     TEXT    NOT NULL,
    container_id TEXT    NOT NULL,
    image_digest TEXT    NOT NULL DEFAULT '',
    started_at   TEXT,
    restarts     INTEGER NOT NULL DEFAULT 0,
    health       TEXT    NOT NULL CHECK (health IN ('healthy', 'unhealthy', 'none')),
    spec_digest  TEXT    NOT NULL DEFAULT '',
    earlier_spec INTEGER NOT NULL DEFAULT 0 CHECK (earlier_spec IN (0, 1)),
    since        TEXT    NOT NULL,
    report_id    INTEGER,
    PRIMARY KEY (node, module, resource),
    FOREIGN KEY (node, module, resource) REFERENCES resource_states (node, module, resource) ON DELETE CASCADE
) WITHOUT ROWID;

-- +goose Down
DROP TABLE container_status;
