-- One status per snapshot, gate and rule (rule_results has a further row per extra finding).
CREATE OR REPLACE VIEW rule_status AS
SELECT snapshot_id, gate, rule_id, any_value(status) AS status, count(*) AS findings
FROM rule_results
GROUP BY ALL;
