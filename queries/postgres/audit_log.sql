-- AuditList pages the log newest first: rows before the id cursor (0: from the newest), each
-- filter '' for any.
-- name: AuditList :many
SELECT * FROM audit_log
WHERE (CAST(@before AS BIGINT) = 0 OR id < CAST(@before AS BIGINT))
  AND (CAST(@operator AS TEXT) = '' OR operator = CAST(@operator AS TEXT))
  AND (CAST(@object AS TEXT) = '' OR object = CAST(@object AS TEXT))
  AND (CAST(@action AS TEXT) = '' OR action = CAST(@action AS TEXT))
  AND at >= CAST(@since AS TEXT)
ORDER BY id DESC LIMIT CAST(@max AS BIGINT);

-- AuditPruneOpen lets this transaction delete from audit_log (SET LOCAL: it ends with the
-- transaction; the trigger checks it); AuditPruneClose shuts it again at once.
-- name: AuditPruneOpen :exec
SELECT set_config('hq.audit_prune', 'on', true);

-- name: AuditPruneClose :exec
SELECT set_config('hq.audit_prune', 'off', true);

-- name: AuditPrune :execrows
DELETE FROM audit_log WHERE id IN (
    SELECT id FROM audit_log WHERE at < CAST(@cutoff AS TEXT) ORDER BY id LIMIT CAST(@batch AS BIGINT));
