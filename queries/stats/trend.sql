-- Each rule's failure rate at every checked census point up to the chosen one ($point), oldest
-- first: the rule_rates view, so the trend and tonight's table can never disagree.
SELECT r.point, r.position, p.started_at, r.rule_id, r.gate, r.evaluated, r.failed, r.info,
    r.skipped, r.rate, r.rate_lo, r.rate_hi
FROM rule_rates r
JOIN points p USING (point)
WHERE r.position <= (SELECT position FROM points WHERE point = $point)
ORDER BY r.position, gate_rank(r.gate), r.rule_id;
