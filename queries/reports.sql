-- name: ReportInsert :one
INSERT INTO reports (node, generation, digest, summary, outcome_digest, applied, failed, stuck, held,
                     grouped_pending, pending, started_at, finished_at, at, last_at)
VALUES (@node, @generation, @digest, @summary, @outcome_digest, @applied, @failed, @stuck, @held,
        @grouped_pending, @pending, @started_at, @finished_at, @at, @at)
RETURNING id;

-- name: ReportGet :one
SELECT * FROM reports WHERE id = @id;

-- name: ReportRepeat :exec
UPDATE reports SET repeats = repeats + 1, last_at = @last_at WHERE id = @id;

-- name: ReportListByNode :many
SELECT * FROM reports WHERE node = @node ORDER BY id DESC LIMIT @max;

-- name: ReportListLatest :many
-- The newest report row of every node.
SELECT r.* FROM reports r JOIN nodes n ON n.last_report_id = r.id;
