-- Each rule's failure rate for every chosen run (? = run ids, VARCHAR[]), in start order:
-- the rule_rates view (each session's latest observation in the run, at its own gate).
SELECT q.run_id, r.started_at, q.gate, q.rule_id, q.evaluated, q.failed, q.info, q.skipped,
    q.rate, q.rate_lo, q.rate_hi
FROM rule_rates q
JOIN runs r USING (run_id)
WHERE list_contains(?::VARCHAR[], q.run_id)
ORDER BY r.started_at, q.run_id, list_position(['session', 'manifest', 'move'], q.gate), q.rule_id;
