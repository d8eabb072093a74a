-- Rule-failure rates (spec §7) over the chosen runs (? = run ids, VARCHAR[]): each session's
-- latest observation among those runs, at its own stage's gate; skipped is outside the
-- denominator; 95% Wilson interval. For one run this equals the rule_rates view; a list lets
-- several runs (shards of one crawl, or every run with a label) count as one.
WITH latest AS (
    SELECT * FROM latest_in(?::VARCHAR[])
),
per_session AS (
    SELECT r.gate, r.rule_id, r.status
    FROM latest o
    JOIN snapshots s USING (snapshot_id)
    JOIN rule_status r ON r.snapshot_id = o.snapshot_id AND r.gate = own_gate(s.stage)
),
counts AS (
    SELECT gate, rule_id,
        count(*) FILTER (WHERE status IN ('pass', 'fail', 'info')) AS evaluated,
        count(*) FILTER (WHERE status = 'fail') AS failed,
        count(*) FILTER (WHERE status = 'info') AS info,
        count(*) FILTER (WHERE status = 'skipped') AS skipped
    FROM per_session
    GROUP BY gate, rule_id
)
SELECT gate, rule_id, evaluated, failed, info, skipped,
    failed / nullif(evaluated, 0) AS rate,
    wilson_lo(failed, evaluated) AS rate_lo,
    wilson_hi(failed, evaluated) AS rate_hi
FROM counts
ORDER BY list_position(['session', 'manifest', 'move'], gate), rule_id;
