-- How a rule's rate is counted, defined once: for a checked census point and a rule, the
-- point's sessions at whose own gate the rule is evaluated, by status (pass, fail and info
-- are evaluated; skipped is counted apart). check freezes these counts with each point it
-- decides (the rule_counts table); rule_rates reads them from there.
CREATE OR REPLACE VIEW rule_counts_live AS
SELECT point, rule_id, evaluated, failed, info, skipped
FROM status_tallies
WHERE rule_id IS NOT NULL AND own_sessions > 0;

-- The counts check froze with each point: those of the check that decided it with the rule
-- set it now has (a re-check under the same rules writes the same counts again).
CREATE OR REPLACE VIEW rule_counts_frozen AS
SELECT f.point, f.rule_id, f.evaluated, f.failed, f.info, f.skipped
FROM rule_counts f
JOIN points p ON p.point = f.point AND p.ruleset = f.ruleset
QUALIFY f.check_id = max(f.check_id) OVER (PARTITION BY f.point);

-- Checked points without frozen counts (checked by a census older than rule_counts).
CREATE OR REPLACE VIEW points_counted_live AS
SELECT point, position
FROM points
WHERE checked AND point NOT IN (SELECT point FROM rule_counts_frozen);

-- The rule-failure rate (spec §7; docs/time-model.md), defined once: the counts above (the
-- frozen ones, or live for a point checked before counts were frozen) with a 95% Wilson
-- interval. check, stats, compare, the report and the alarms all read this view. run_id (last, so
-- that columns read by position keep their places) is the spec's key (§6): a point of one run is that run; a point of several (a night's shards) is
-- named by its last run, and stays one row per rule so that no rate is counted twice.
CREATE OR REPLACE VIEW rule_rates AS
WITH counts AS (
    SELECT * FROM rule_counts_frozen
    UNION ALL
    SELECT * FROM rule_counts_live
    WHERE point IN (SELECT point FROM points_counted_live)
)
SELECT p.point, p.position, r.rule_id, r.gate,
    coalesce(c.evaluated, 0) AS evaluated,
    coalesce(c.failed, 0) AS failed,
    coalesce(c.info, 0) AS info,
    coalesce(c.skipped, 0) AS skipped,
    c.failed / nullif(c.evaluated, 0) AS rate,
    wilson_lo(c.failed, c.evaluated, z95()) AS rate_lo,
    wilson_hi(c.failed, c.evaluated, z95()) AS rate_hi,
    p.runs[-1] AS run_id
FROM points p
CROSS JOIN rules r
LEFT JOIN counts c ON c.point = p.point AND c.rule_id = r.rule_id
WHERE p.checked;

-- A separate, explicitly named metric: every session of the point evaluated at one gate,
-- whatever its own stage ("how many open sessions would already pass the manifest gate?").
CREATE OR REPLACE VIEW rule_rates_at_gate AS
WITH counts AS (
    SELECT s.point, g.gate, s.rule_id,
        count(*) FILTER (WHERE is_evaluated(s.status)) AS evaluated,
        count(*) FILTER (WHERE s.status = 'fail') AS failed,
        count(*) FILTER (WHERE s.status = 'info') AS info,
        count(*) FILTER (WHERE s.status = 'skipped') AS skipped
    FROM statuses s
    JOIN gates g ON gate_includes(g.gate, s.gate)
    GROUP BY s.point, g.gate, s.rule_id
)
SELECT point, gate, rule_id, evaluated, failed, info, skipped,
    failed / nullif(evaluated, 0) AS rate,
    wilson_lo(failed, evaluated, z95()) AS rate_lo,
    wilson_hi(failed, evaluated, z95()) AS rate_hi
FROM counts;
