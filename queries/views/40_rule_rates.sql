-- Rule-failure rates per run, gate and rule, over each session's latest observation in the run
-- at its own stage's gate, with a 95% Wilson interval; skipped is outside the denominator.
CREATE OR REPLACE VIEW rule_rates AS
WITH counts AS (
    SELECT o.run_id, r.gate, r.rule_id,
        count(*) FILTER (WHERE r.status IN ('pass', 'fail', 'info')) AS evaluated,
        count(*) FILTER (WHERE r.status = 'fail') AS failed,
        count(*) FILTER (WHERE r.status = 'info') AS info,
        count(*) FILTER (WHERE r.status = 'skipped') AS skipped
    FROM latest_observations o
    JOIN snapshots s USING (snapshot_id)
    JOIN rule_status r ON r.snapshot_id = o.snapshot_id AND r.gate = own_gate(s.stage)
    GROUP BY ALL
)
SELECT run_id, gate, rule_id, evaluated, failed, info, skipped,
    failed / nullif(evaluated, 0) AS rate,
    wilson_lo(failed, evaluated) AS rate_lo,
    wilson_hi(failed, evaluated) AS rate_hi
FROM counts;
