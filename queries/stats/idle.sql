-- Idle sessions (spec §7) per stage and over all (stage 'all'), at each session's latest
-- observation among the chosen runs (? = run ids, VARCHAR[]): the run's start time minus the
-- snapshot's content_time, in hours; measured counts sessions whose content_time is known.
WITH latest AS (
    SELECT * FROM latest_in(?::VARCHAR[])
),
idle AS (
    SELECT s.stage,
        (epoch_ms(r.started_at) - epoch_ms(s.content_time)) / 3600000.0 AS idle_hours
    FROM latest o
    JOIN runs r USING (run_id)
    JOIN snapshots s USING (snapshot_id)
)
SELECT
    CASE WHEN grouping(stage) = 1 THEN 'all' ELSE stage END AS stage,
    count(*) AS sessions,
    count(idle_hours) AS measured,
    quantile_cont(idle_hours, 0.5) AS idle_p50_hours,
    quantile_cont(idle_hours, 0.9) AS idle_p90_hours,
    max(idle_hours) AS idle_max_hours,
    count(*) FILTER (WHERE idle_hours > 24 * 7) AS idle_over_7d,
    count(*) FILTER (WHERE idle_hours > 24 * 30) AS idle_over_30d
FROM idle
GROUP BY GROUPING SETS ((), (stage))
ORDER BY grouping(stage) DESC, list_position(['open', 'converging', 'applied', 'harvested'], stage);
