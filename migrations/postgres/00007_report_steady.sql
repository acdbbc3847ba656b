-- +goose Up
-- hq_report_steady takes a steady report in one call from the controller: one that answers a
-- send recorded for the node, says what the node's last report said, and carries no failure,
-- drift, refusal or host facts (the controller calls it only for those). It writes what the
-- controller's general path writes for such a report: the last report counted once more, the
-- node's last report time, the send marked applied. It returns, as a JSON object, the report
-- row counted (report_id, summary), the node's generation, its stuck resources and the retries
-- asked for it (stuck, retry: arrays of [module, resource], in order), clearing the retries.
-- For any other report it changes nothing and returns NULL, and the controller takes the
-- report statement by statement. A round trip to the server costs more than the statements
-- it carries, and a fleet's steady reports are most of what its controllers send.
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

-- +goose Down
DROP FUNCTION hq_report_steady(TEXT, BIGINT, BIGINT, BIGINT, TEXT, TEXT, TEXT, BIGINT, TEXT);
