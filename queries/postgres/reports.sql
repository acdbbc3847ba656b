-- name: ReportListByNode :many
SELECT * FROM reports WHERE node = @node ORDER BY id DESC LIMIT @max::bigint;

-- name: ReportListLatestByNodes :many
-- The newest report row of some nodes (a JSON array of names).
SELECT r.* FROM reports r JOIN nodes n ON n.last_report_id = r.id
WHERE n.name IN (SELECT value FROM json_array_elements_text(CAST(@nodes AS text)::json));

-- name: ReportPruneWindowEnd :one
-- The last row of the next window of at most @batch rows after @after, oldest first, and its
-- time: retention walks the table in windows so no pass holds the writer for long. It is the
-- time the row was written (at), which grows with id; last_at, which repeats move, does not.
SELECT id, at FROM (SELECT id, at FROM reports WHERE id > @after ORDER BY id LIMIT @batch::bigint) AS w
ORDER BY id DESC LIMIT 1;

-- name: ReportPrune :execrows
-- Rows of the window (@after, @until] older than @cutoff, except each node's newest @keep.
DELETE FROM reports WHERE id IN (
    SELECT w.id FROM reports w
    -- Each node of the window once: the id from which its newest @keep+1 rows begin.
    JOIN (SELECT n.node AS node,
                 (SELECT k.id FROM reports k WHERE k.node = n.node ORDER BY k.id DESC LIMIT 1 OFFSET @keep::bigint) AS from_id
          FROM (SELECT DISTINCT d.node FROM reports d WHERE d.id > @after AND d.id <= @until) n) kept ON kept.node = w.node
    WHERE w.id > @after AND w.id <= @until AND w.last_at < @cutoff AND w.id < COALESCE(kept.from_id, 0)
);

-- name: ReportSteady :one
-- A steady report in one round trip: what hq_report_steady answers (a JSON object), or ''
-- with nothing changed.
SELECT COALESCE(hq_report_steady(@node::text, @token_hash::text, sqlc.narg(if_match)::bigint, @send_id::bigint, @generation::bigint,
    @digest::text, @signature::text, @outcome::text, @results::bigint, @at::text), '')::text AS answer;

-- name: ReportSettled :one
-- A report of plain "applied" results over all of a node's resources in one round trip: what
-- hq_report_settled answers (a JSON object), or '' with nothing changed.
SELECT COALESCE(hq_report_settled(@node::text, @token_hash::text, sqlc.narg(if_match)::bigint, @send_id::bigint, @generation::bigint,
    @digest::text, @signature::text, @outcome::text, @results::bigint, @attempt::bigint, @summary::text,
    sqlc.narg(started_at)::text, sqlc.narg(finished_at)::text, @at::text), '')::text AS answer;

-- name: ReportsSteady :many
-- Steady reports of distinct nodes in one round trip, each as ReportSteady takes it: @reports
-- is a JSON array of hq_report_steady's arguments, each with its place in the array (i), and a
-- row answers each, in that order.
SELECT a.i::bigint AS i,
    COALESCE(hq_report_steady(a.node, a.token_hash, a.if_match, a.send_id, a.generation, a.digest, a.signature,
        a.outcome, a.results, a.at), '')::text AS answer
FROM json_to_recordset(@reports::json) AS a(i bigint, node text, token_hash text, if_match bigint, send_id bigint,
    generation bigint, digest text, signature text, outcome text, results bigint, at text)
ORDER BY a.i;

-- name: ReportsSettled :many
-- Reports of distinct nodes that ReportSettled may take, in one round trip, each as it takes
-- one: @reports is a JSON array of hq_report_settled's arguments, each with its place in the
-- array (i), and a row answers each, in that order.
SELECT a.i::bigint AS i,
    COALESCE(hq_report_settled(a.node, a.token_hash, a.if_match, a.send_id, a.generation, a.digest, a.signature,
        a.outcome, a.results, a.attempt, a.summary, a.started_at, a.finished_at, a.at), '')::text AS answer
FROM json_to_recordset(@reports::json) AS a(i bigint, node text, token_hash text, if_match bigint, send_id bigint,
    generation bigint, digest text, signature text, outcome text, results bigint, attempt bigint, summary text,
    started_at text, finished_at text, at text)
ORDER BY a.i;
