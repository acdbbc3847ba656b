-- +goose Up
-- hq_report_answer is what a report taken in one call answers: as a JSON object, the report row
-- (report_id, summary), the node's generation, its stuck resources and the retries asked for it
-- (stuck, retry: arrays of [module, resource], in order). It clears the retries it hands out.
-- +goose StatementBegin
CREATE FUNCTION hq_report_answer(p_node TEXT, p_report_id BIGINT, p_summary TEXT, p_generation BIGINT)
RETURNS TEXT
LANGUAGE plpgsql AS $$
DECLARE
    answer TEXT;
BEGIN
    SELECT json_build_object('report_id', p_report_id, 'summary', p_summary, 'generation', p_generation,
        'stuck', (SELECT COALESCE(json_agg(json_build_array(rs.module, rs.resource) ORDER BY rs.module, rs.resource), '[]'::json)
         FROM resource_states rs WHERE rs.node = p_node AND rs.state = 'stuck'),
        'retry', (SELECT COALESCE(json_agg(json_build_array(rs.module, rs.resource) ORDER BY rs.module, rs.resource), '[]'::json)
         FROM resource_states rs WHERE rs.node = p_node AND rs.retry_requested = 1))::TEXT
    INTO answer;
    -- Only when there are some: a statement that changes nothing still runs its table's triggers.
    IF EXISTS (SELECT 1 FROM resource_states rs WHERE rs.node = p_node AND rs.retry_requested = 1) THEN
        UPDATE resource_states SET retry_requested = 0 WHERE node = p_node AND retry_requested = 1;
    END IF;
    RETURN answer;
END
$$;
-- +goose StatementEnd

-- hq_report_steady as before, with the node's token checked (p_token_hash, the hash of the
-- token the report came with, or '' when the caller is not the node) and its answer made by
-- hq_report_answer. A token that does not hold takes nothing.
DROP FUNCTION hq_report_steady(TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, BIGINT, TEXT);
-- +goose StatementBegin
CREATE FUNCTION hq_report_steady(p_node TEXT, p_token_hash TEXT, p_if_match BIGINT, p_send_id BIGINT,
    p_generation BIGINT, p_digest TEXT, p_signature TEXT, p_outcome TEXT, p_results BIGINT, p_at TEXT)
RETURNS TEXT
LANGUAGE plpgsql AS $$
DECLARE
    n_token_hash TEXT;
    n_generation BIGINT;
    n_applied_generation BIGINT;
    n_applied_digest TEXT;
    n_last_report BIGINT;
    prev_summary TEXT;
    prev_outcome TEXT;
BEGIN
    -- First, as every write transaction of hq's does (see migration 7).
    PERFORM hq_lock_writes();
    SELECT n.token_hash, n.generation, n.applied_generation, n.applied_digest, n.last_report_id
    INTO n_token_hash, n_generation, n_applied_generation, n_applied_digest, n_last_report
    FROM nodes n WHERE n.name = p_node AND n.deleted_at IS NULL;
    IF NOT FOUND OR (p_token_hash <> '' AND p_token_hash <> n_token_hash)
        OR n_last_report IS NULL OR (p_if_match IS NOT NULL AND p_if_match <> n_generation)
        OR p_generation > n_applied_generation
        OR (p_generation = n_applied_generation AND p_digest <> n_applied_digest) THEN
        RETURN NULL;
    END IF;
    SELECT r.summary, r.outcome_digest INTO prev_summary, prev_outcome FROM reports r WHERE r.id = n_last_report;
    IF prev_outcome IS DISTINCT FROM p_outcome OR NOT EXISTS (SELECT 1 FROM sends s
            WHERE s.node = p_node AND s.id = p_send_id AND s.generation = p_generation AND s.digest = p_digest
            AND s.outcome <> 'refused' AND (s.signature = '' OR s.signature = p_signature) AND p_results <= s.resources) THEN
        RETURN NULL;
    END IF;
    UPDATE reports SET repeats = repeats + 1, last_at = p_at WHERE id = n_last_report;
    UPDATE nodes SET last_report_at = p_at, last_report_id = n_last_report WHERE name = p_node;
    IF EXISTS (SELECT 1 FROM sends s WHERE s.node = p_node AND s.generation = p_generation AND s.digest = p_digest
            AND s.outcome = 'sent') THEN
        UPDATE sends SET outcome = 'applied', outcome_at = p_at
        WHERE node = p_node AND sends.generation = p_generation AND digest = p_digest AND outcome = 'sent';
    END IF;
    RETURN hq_report_answer(p_node, n_last_report, prev_summary, GREATEST(n_generation, p_generation));
END
$$;
-- +goose StatementEnd

-- hq_report_settled takes in one call a report whose every result is a plain "applied" (no
-- error, hold, gate or drift), for the node's current declaration, when the node's resources
-- are all pending or all applied: the first report after an apply, when the host says nothing
-- changed where its last report said everything had, and a whole first apply. p_refs is the
-- results as a JSON array of "module/resource", which must name every resource of the node, and
-- p_attempt is 1 when every result was attempted and changed, 0 when none was. The controller
-- works out the report's summary line (p_summary), and p_token_hash is as hq_report_steady
-- has it. A report that repeats the node's last one is
-- hq_report_steady's. The call writes what the controller's general path writes for such a
-- report: a new report row; the node's pending resources applied (all of them, since the
-- results name every one), their attempts counted when p_attempt is 1; the node's last report;
-- the send marked applied, and when the report applies a newer declaration, the node's applied
-- declaration and the older unanswered sends superseded. It answers as hq_report_answer does.
-- For any other report it changes nothing and returns NULL.
-- +goose StatementBegin
CREATE FUNCTION hq_report_settled(p_node TEXT, p_token_hash TEXT, p_if_match BIGINT, p_send_id BIGINT,
    p_generation BIGINT, p_digest TEXT, p_signature TEXT, p_outcome TEXT, p_refs TEXT, p_attempt BIGINT, p_summary TEXT,
    p_started_at TEXT, p_finished_at TEXT, p_at TEXT)
RETURNS TEXT
LANGUAGE plpgsql AS $$
DECLARE
    n nodes%ROWTYPE;
    n_results BIGINT;
    named BIGINT;
    new_report BIGINT;
BEGIN
    PERFORM hq_lock_writes();
    SELECT * INTO n FROM nodes WHERE name = p_node AND deleted_at IS NULL;
    IF NOT FOUND OR (p_token_hash <> '' AND p_token_hash <> n.token_hash)
        OR (p_if_match IS NOT NULL AND p_if_match <> n.generation) THEN
        RETURN NULL;
    END IF;
    IF n.last_report_id IS NOT NULL AND
        (SELECT r.outcome_digest FROM reports r WHERE r.id = n.last_report_id) = p_outcome THEN
        RETURN hq_report_steady(p_node, p_token_hash, p_if_match, p_send_id, p_generation, p_digest, p_signature,
            p_outcome, json_array_length(p_refs::json), p_at);
    END IF;
    n_results := json_array_length(p_refs::json);
    -- The node's resources all pending or all applied, as many as the results.
    IF p_generation <> n.generation OR p_attempt NOT IN (0, 1)
        OR n.resources_failed + n.resources_stuck + n.resources_held + n.resources_grouped_pending > 0
        OR NOT (n.resources_pending = n_results AND n.resources_applied = 0
            OR n.resources_applied = n_results AND n.resources_pending = 0 AND p_attempt = 0)
        OR NOT EXISTS (SELECT 1 FROM sends s
            WHERE s.node = p_node AND s.id = p_send_id AND s.generation = p_generation AND s.digest = p_digest
            AND s.outcome <> 'refused' AND (s.signature = '' OR s.signature = p_signature) AND s.resources = n_results) THEN
        RETURN NULL;
    END IF;
    -- Every resource of the node named, once each.
    SELECT COUNT(*) INTO named FROM resource_states rs
    WHERE rs.node = p_node AND (rs.module, rs.resource) IN
        (SELECT split_part(value, '/', 1), substr(value, strpos(value, '/') + 1) FROM json_array_elements_text(p_refs::json));
    IF named <> n_results THEN
        RETURN NULL;
    END IF;
    INSERT INTO reports (node, generation, digest, summary, outcome_digest, applied, failed, stuck, held,
                         grouped_pending, pending, started_at, finished_at, at, last_at)
    VALUES (p_node, p_generation, p_digest, p_summary, p_outcome, n_results, 0, 0, 0, 0, 0,
            p_started_at, p_finished_at, p_at, p_at)
    RETURNING id INTO new_report;
    IF n.resources_pending > 0 THEN
        UPDATE resource_states
        SET state = 'applied', since = p_at, attempts = attempts + p_attempt, consecutive_failures = 0,
            failing_since = NULL, never_applied = 0, last_error = '', hold_reason = '', blocked_by = '',
            report_id = new_report, reason = 'applied'
        WHERE node = p_node AND state = 'pending';
    END IF;
    UPDATE nodes SET last_report_at = p_at, last_report_id = new_report WHERE name = p_node;
    IF EXISTS (SELECT 1 FROM sends s WHERE s.node = p_node AND s.generation = p_generation AND s.digest = p_digest
            AND s.outcome = 'sent') THEN
        UPDATE sends SET outcome = 'applied', outcome_at = p_at
        WHERE node = p_node AND sends.generation = p_generation AND digest = p_digest AND outcome = 'sent';
    END IF;
    -- applied_generation never goes back.
    IF p_generation >= n.applied_generation AND (p_generation <> n.applied_generation OR p_digest <> n.applied_digest) THEN
        UPDATE nodes SET applied_generation = p_generation, applied_digest = p_digest, applied_at = p_at WHERE name = p_node;
        UPDATE sends SET outcome = 'superseded', outcome_at = p_at
        WHERE node = p_node AND sends.generation < p_generation AND outcome = 'sent';
    END IF;
    RETURN hq_report_answer(p_node, new_report, p_summary, n.generation);
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION hq_report_settled(TEXT, TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT);
DROP FUNCTION hq_report_steady(TEXT, TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, BIGINT, TEXT);
-- +goose StatementBegin
CREATE FUNCTION hq_report_steady(p_node TEXT, p_if_match BIGINT, p_send_id BIGINT, p_generation BIGINT,
    p_digest TEXT, p_signature TEXT, p_outcome TEXT, p_results BIGINT, p_at TEXT)
RETURNS TEXT
LANGUAGE plpgsql AS $$
DECLARE
    n_generation BIGINT;
    n_applied_generation BIGINT;
    n_applied_digest TEXT;
    n_last_report BIGINT;
    prev_summary TEXT;
    prev_outcome TEXT;
    s_found BOOLEAN;
    answer TEXT;
BEGIN
    -- First, as every write transaction of hq's does: the controller may call this alone, as a
    -- statement that is its own transaction, and what it reads must not move before it writes.
    PERFORM hq_lock_writes();
    SELECT n.generation, n.applied_generation, n.applied_digest, n.last_report_id
    INTO n_generation, n_applied_generation, n_applied_digest, n_last_report
    FROM nodes n WHERE n.name = p_node AND n.deleted_at IS NULL;
    IF NOT FOUND OR n_last_report IS NULL OR (p_if_match IS NOT NULL AND p_if_match <> n_generation)
        -- A newer declaration applied moves the node's applied generation: the general path.
        OR p_generation > n_applied_generation
        OR (p_generation = n_applied_generation AND p_digest <> n_applied_digest) THEN
        RETURN NULL;
    END IF;
    SELECT r.summary, r.outcome_digest INTO prev_summary, prev_outcome FROM reports r WHERE r.id = n_last_report;
    SELECT EXISTS (SELECT 1 FROM sends s WHERE s.node = p_node AND s.id = p_send_id
        AND s.generation = p_generation AND s.digest = p_digest AND s.outcome <> 'refused'
        AND (s.signature = '' OR s.signature = p_signature) AND p_results <= s.resources) INTO s_found;
    IF prev_outcome IS DISTINCT FROM p_outcome OR NOT s_found THEN
        RETURN NULL;
    END IF;
    UPDATE reports SET repeats = repeats + 1, last_at = p_at WHERE id = n_last_report;
    UPDATE nodes SET last_report_at = p_at, last_report_id = n_last_report WHERE name = p_node;
    -- Only when there is a send to mark: a statement that changes nothing still runs its
    -- table's triggers.
    IF EXISTS (SELECT 1 FROM sends s WHERE s.node = p_node AND s.generation = p_generation AND s.digest = p_digest
            AND s.outcome = 'sent') THEN
        UPDATE sends SET outcome = 'applied', outcome_at = p_at
        WHERE node = p_node AND sends.generation = p_generation AND digest = p_digest AND outcome = 'sent';
    END IF;
    SELECT json_build_object('report_id', n_last_report, 'summary', prev_summary,
        'generation', GREATEST(n_generation, p_generation),
        'stuck', (SELECT COALESCE(json_agg(json_build_array(rs.module, rs.resource) ORDER BY rs.module, rs.resource), '[]'::json)
         FROM resource_states rs WHERE rs.node = p_node AND rs.state = 'stuck' AND rs.state NOT IN ('applied', 'pending')),
        'retry', (SELECT COALESCE(json_agg(json_build_array(rs.module, rs.resource) ORDER BY rs.module, rs.resource), '[]'::json)
         FROM resource_states rs WHERE rs.node = p_node AND rs.retry_requested = 1))::TEXT
    INTO answer;
    IF EXISTS (SELECT 1 FROM resource_states rs WHERE rs.node = p_node AND rs.retry_requested = 1) THEN
        UPDATE resource_states SET retry_requested = 0 WHERE node = p_node AND retry_requested = 1;
    END IF;
    RETURN answer;
END
$$;
-- +goose StatementEnd

DROP FUNCTION hq_report_answer(TEXT, BIGINT, TEXT, BIGINT);
