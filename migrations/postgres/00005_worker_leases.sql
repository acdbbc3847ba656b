-- +goose Up
-- worker_leases: which controller runs each piece of background work that one controller at a
-- time should (the mover, the rollout worker, the pruner), and until when. The holder renews
-- its lease well before expires_at; another controller takes it once it has expired, so work
-- goes on within a lease's length after its controller dies.
CREATE TABLE worker_leases (
    worker     TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    holder     TEXT COLLATE "C" NOT NULL,
    taken_at   TEXT COLLATE "C" NOT NULL,
    expires_at TEXT COLLATE "C" NOT NULL
);

-- +goose Down
DROP TABLE worker_leases;
