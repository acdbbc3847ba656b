-- name: LeaseTake :execrows
-- Takes or renews a worker's lease for @holder: a row changes only when the lease is free,
-- already @holder's, or expired by @now. taken_at stays while the same holder renews.
INSERT INTO worker_leases (worker, holder, taken_at, expires_at) VALUES (@worker, @holder, @now, @expires_at)
ON CONFLICT (worker) DO UPDATE SET
    taken_at = CASE WHEN worker_leases.holder = excluded.holder THEN worker_leases.taken_at ELSE excluded.taken_at END,
    holder = excluded.holder, expires_at = excluded.expires_at
WHERE worker_leases.holder = excluded.holder OR worker_leases.expires_at <= excluded.taken_at;

-- name: LeaseRelease :exec
-- Gives a lease up at once, so another controller need not wait for it to expire.
DELETE FROM worker_leases WHERE worker = @worker AND holder = @holder;

-- name: LeaseList :many
SELECT * FROM worker_leases ORDER BY worker;
