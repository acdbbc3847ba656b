-- name: DriftInsert :exec
INSERT INTO drifts (node, module, resource, at, report_id, detail, found)
VALUES (@node, @module, @resource, @at, @report_id, @detail, @found);
