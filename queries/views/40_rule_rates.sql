-- Rule-failure rates per run, gate and rule, over each session's latest observation in the run
-- at its own stage's gate, with a 95% Wilson interval; skipped is outside the denominator.
CREATE OR REPLACE VIEW rule_rates AS
WITH per_session AS (
    SELECT o.run_id, r.gate, r.rule_id, r.status
    FROM latest_observations o
    JOIN snapshots s USING (snapshot_id)
    JOIN rule_status r ON r.snapshot_id = o.snapshot_id AND r.gate = own_gate(s.stage)
),
counts AS (
    SELECT run_id, gate, rule_id,
        count(*) FILTER (WHERE status IN ('pass', 'fail', 'info')) AS evaluated,
        count(*) FILTER (WHERE status = 'fail') AS failed,
        count(*) FILTER (WHERE status = 'info') AS info,
        count(*) FILTER (WHERE status = 'skipped') AS skipped
    FROM per_session
    GROUP BY ALL
),
wilson AS (
    SELECT *, failed / nullif(evaluated, 0) AS p, 1.959963984540054 AS z FROM counts
)
SELECT run_id, gate, rule_id, evaluated, failed, info, skipped,
    p AS rate,
    CASE WHEN evaluated > 0 THEN
        (p + z * z / (2 * evaluated) - z * sqrt(p * (1 - p) / evaluated + z * z / (4 * evaluated * evaluated)))
        / (1 + z * z / evaluated) END AS rate_lo,
    CASE WHEN evaluated > 0 THEN
        (p + z * z / (2 * evaluated) + z * sqrt(p * (1 - p) / evaluated + z * z / (4 * evaluated * evaluated)))
        / (1 + z * z / evaluated) END AS rate_hi
FROM wilson;
