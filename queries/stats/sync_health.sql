-- Sync health (spec §7) at the chosen census point ($point), per dispatch gate and over all
-- (gate 'all'; a result line with no dispatch has gate '(none)'). A sync is one sync_pairs
-- row of a session's snapshot at the point:
--   in_flight  dispatched, no result yet, and the session's newest dispatch (allowed);
--   unpaired   dispatched, no result, and not the newest (BS-SYNC-01 fails);
--   unread     a result line of it whose outcome could not be read (a bad-sync-line issue;
--              BS-SYNC-01 fails it): answered, so neither in flight nor unpaired, and left
--              out of failed_share, whose outcomes are the ones read;
--   orphaned   a result line with no dispatch line;
--   misfiled   dispatched or answered more than once, or answered before its dispatch: in
--              file order (BS-SYNC-01 fails it for its lines) or by its timestamps;
--   failed     any result line of it reads failed (a later "failed" counts, not only the first);
--   latency    sync_pairs.latency_s: result time minus dispatch time, seconds, where both parse
--              and the result comes after the dispatch in file order and in time.
WITH pairs AS (
    SELECT s.session_key, s.root, coalesce(p.gate, '(none)') AS gate,
        p.* EXCLUDE (gate),
        p.dispatches > 1 OR p.results > 1 OR p.result_line < p.dispatch_line
            OR p.result_at < p.dispatched_at AS misfiled
    FROM point_sessions s
    JOIN sync_pairs p USING (snapshot_id)
    WHERE s.point = $point
)
SELECT
    CASE WHEN grouping(gate) = 1 THEN 'all' ELSE gate END AS gate,
    count(DISTINCT (session_key, root)) AS sessions,
    count(*) AS syncs,
    count(*) FILTER (WHERE result = 'reconciled' AND failed_results = 0) AS reconciled,
    count(*) FILTER (WHERE failed_results > 0) AS failed,
    count(*) FILTER (WHERE result_line IS NULL AND newest) AS in_flight,
    count(*) FILTER (WHERE result_line IS NULL AND NOT newest) AS unpaired,
    count(*) FILTER (WHERE result_line IS NOT NULL AND result IS NULL) AS unread,
    count(*) FILTER (WHERE dispatch_line IS NULL) AS orphaned,
    count(*) FILTER (WHERE misfiled) AS misfiled,
    count(*) FILTER (WHERE failed_results > 0)
        / nullif(count(*) FILTER (WHERE result IS NOT NULL), 0) AS failed_share,
    count(latency_s) AS latency_n,
    quantile_cont(latency_s, 0.5) AS latency_p50_s,
    quantile_cont(latency_s, 0.9) AS latency_p90_s,
    max(latency_s) AS latency_max_s
FROM pairs
GROUP BY GROUPING SETS ((), (gate))
ORDER BY grouping(gate) DESC, gate;
