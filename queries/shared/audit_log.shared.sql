-- name: AuditInsert :exec
INSERT INTO audit_log (at, operator, role, via, source, action, object, result, outcome, detail)
VALUES (@at, @operator, @role, @via, @source, @action, @object, @result, @outcome, @detail);
