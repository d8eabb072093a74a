-- Sync health (spec §7) at the chosen census point ($point), per dispatch gate and over all
-- (gate 'all'; a result line with no dispatch has gate '(none)'). A sync is one sync_pairs
-- row of a session's snapshot at the point:
--   in_flight  dispatched, no result yet, and the session's newest dispatch (allowed);
--   unpaired   dispatched, no result, and not the newest (BS-SYNC-01 fails);
--   orphaned   a result line with no dispatch line;
--   latency    result time minus dispatch time, seconds, where both parse.
WITH pairs AS (
    SELECT s.session_key, s.root, coalesce(p.gate, '(none)') AS gate, p.* EXCLUDE (gate)
    FROM point_sessions s
    JOIN sync_pairs p USING (snapshot_id)
    WHERE s.point = $point
)
SELECT
    CASE WHEN grouping(gate) = 1 THEN 'all' ELSE gate END AS gate,
    count(DISTINCT (session_key, root)) AS sessions,
    count(*) AS syncs,
    count(*) FILTER (WHERE result = 'reconciled') AS reconciled,
    count(*) FILTER (WHERE result = 'failed') AS failed,
    count(*) FILTER (WHERE result IS NULL AND dispatch_line IS NOT NULL AND newest) AS in_flight,
    count(*) FILTER (WHERE result IS NULL AND dispatch_line IS NOT NULL AND NOT newest) AS unpaired,
    count(*) FILTER (WHERE dispatch_line IS NULL) AS orphaned,
    count(*) FILTER (WHERE result = 'failed') / nullif(count(*) FILTER (WHERE result IS NOT NULL), 0)
        AS failed_share,
    count(latency_s) AS latency_n,
    quantile_cont(latency_s, 0.5) AS latency_p50_s,
    quantile_cont(latency_s, 0.9) AS latency_p90_s,
    max(latency_s) AS latency_max_s
FROM pairs
GROUP BY GROUPING SETS ((), (gate))
ORDER BY grouping(gate) DESC, gate;
