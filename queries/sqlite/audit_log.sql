-- AuditList pages the log newest first: rows before the id cursor (0: from the newest), each
-- filter '' for any.
-- name: AuditList :many
SELECT * FROM audit_log
WHERE (CAST(@before AS INTEGER) = 0 OR id < CAST(@before AS INTEGER))
  AND (CAST(@operator AS TEXT) = '' OR operator = CAST(@operator AS TEXT))
  AND (CAST(@object AS TEXT) = '' OR object = CAST(@object AS TEXT))
  AND (CAST(@action AS TEXT) = '' OR action = CAST(@action AS TEXT))
  AND at >= CAST(@since AS TEXT)
ORDER BY id DESC LIMIT CAST(@max AS INTEGER);

-- AuditPruneOpen lets this transaction delete from audit_log (the trigger checks audit_prune);
-- AuditPruneClose shuts it again before the transaction commits.
-- name: AuditPruneOpen :exec
UPDATE audit_prune SET pruning = 1 WHERE one = 1;

-- name: AuditPruneClose :exec
UPDATE audit_prune SET pruning = 0 WHERE one = 1;

-- name: AuditPrune :execrows
DELETE FROM audit_log WHERE id IN (
    SELECT id FROM audit_log WHERE at < CAST(@cutoff AS TEXT) ORDER BY id LIMIT CAST(@batch AS INTEGER));
