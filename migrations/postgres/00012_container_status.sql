-- +goose Up
-- container_status: what runs for each container resource on each node, as its hostd last
-- reported it: the engine's id of the container, the digest of its image, when its process
-- last started (NULL when it never did), the restarts hostd saw since it created it, its health
-- (healthy, unhealthy, or none when it declares no check) and the digest of the spec it was
-- made from, with earlier_spec 1 when that is not the spec declared now (a group rolled back,
-- or the change has not applied yet). Written only when a report says something new of it, so
-- a steady report writes nothing here; since is when it was. A row goes with its resource.
CREATE TABLE container_status (
    node         TEXT COLLATE "C" NOT NULL,
    module       TEXT COLLATE "C" NOT NULL,
    resource     TEXT COLLATE "C" NOT NULL,
    container_id TEXT COLLATE "C" NOT NULL,
    image_digest TEXT COLLATE "C" NOT NULL DEFAULT '',
    started_at   TEXT COLLATE "C",
    restarts     BIGINT NOT NULL DEFAULT 0,
    health       TEXT COLLATE "C" NOT NULL CHECK (health IN ('healthy', 'unhealthy', 'none')),
    spec_digest  TEXT COLLATE "C" NOT NULL DEFAULT '',
    earlier_spec BIGINT NOT NULL DEFAULT 0 CHECK (earlier_spec IN (0, 1)),
    since        TEXT COLLATE "C" NOT NULL,
    report_id    BIGINT,
    PRIMARY KEY (node, module, resource),
    FOREIGN KEY (node, module, resource) REFERENCES resource_states (node, module, resource) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE container_status;
