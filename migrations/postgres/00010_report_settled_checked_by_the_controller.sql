-- +goose Up
-- hq_report_settled no longer reads the node's resources to check that the results name each of
-- them once: it was most of the call's cost. The controller checks that instead, before it
-- calls, against the declaration it composed with the report's digest (the digest covers the
-- node, the generation and every resource): p_results is how many results there are, and the
-- call still takes the report only for the declaration the node has now, whose resources are
-- as many as the results, all pending or all applied. Otherwise it is migration 8's.
DROP FUNCTION hq_report_settled(TEXT, TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT);
-- +goose StatementBegin
CREATE FUNCTION hq_report_settled(p_node TEXT, p_token_hash TEXT, p_if_match BIGINT, p_send_id BIGINT,
    p_generation BIGINT, p_digest TEXT, p_signature TEXT, p_outcome TEXT, p_results BIGINT, p_attempt BIGINT, p_summary TEXT,
    p_started_at TEXT, p_finished_at TEXT, p_at TEXT)
RETURNS TEXT
LANGUAGE plpgsql AS $$
DECLARE
    n nodes%ROWTYPE;
    n_results BIGINT := p_results;
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
            p_outcome, p_results, p_at);
    END IF;
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
DROP FUNCTION hq_report_settled(TEXT, TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, BIGINT, BIGINT, TEXT, TEXT, TEXT, TEXT);
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
