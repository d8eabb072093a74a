-- Sessions by stage per run (spec §7) for the chosen runs (? = run ids, VARCHAR[]): each
-- session's latest observation in the run.
WITH chosen AS (
    SELECT unnest(?::VARCHAR[]) AS run_id
)
SELECT o.run_id, r.started_at, s.stage, count(*) AS sessions
FROM latest_observations o
SEMI JOIN chosen USING (run_id)
JOIN runs r USING (run_id)
JOIN snapshots s USING (snapshot_id)
GROUP BY o.run_id, r.started_at, s.stage
ORDER BY r.started_at, o.run_id, list_position(['open', 'converging', 'applied', 'harvested'], s.stage);
