-- Rule-failure rates (spec §7) over the chosen runs (? = run ids, VARCHAR[]): each session's
-- latest observation among those runs, at its own stage's gate; skipped is outside the
-- denominator; 95% Wilson interval. For one run this equals the rule_rates view; a list lets
-- several runs (shards of one crawl, or every run with a label) count as one.
WITH chosen AS (
    SELECT unnest(?::VARCHAR[]) AS run_id
),
latest AS (
    SELECT o.*
    FROM latest_observations o
    SEMI JOIN chosen USING (run_id)
    QUALIFY row_number() OVER (
        PARTITION BY o.session_key ORDER BY o.observed_at DESC, o.run_id DESC
    ) = 1
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
),
wilson AS (
    SELECT *, failed / nullif(evaluated, 0) AS p, 1.959963984540054 AS z FROM counts
)
SELECT gate, rule_id, evaluated, failed, info, skipped,
    p AS rate,
    CASE WHEN evaluated > 0 THEN
        (p + z * z / (2 * evaluated)
            - z * sqrt(p * (1 - p) / evaluated + z * z / (4 * evaluated * evaluated)))
        / (1 + z * z / evaluated) END AS rate_lo,
    CASE WHEN evaluated > 0 THEN
        (p + z * z / (2 * evaluated)
            + z * sqrt(p * (1 - p) / evaluated + z * z / (4 * evaluated * evaluated)))
        / (1 + z * z / evaluated) END AS rate_hi
FROM wilson
ORDER BY list_position(['session', 'manifest', 'move'], gate), rule_id;
