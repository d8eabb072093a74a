-- Idle sessions (spec §7) at the chosen census point ($point), per stage and over all (stage
-- 'all'): the start of the point's run that saw the session minus its content_time, in hours;
-- measured counts sessions whose content_time is known. A content_time later than the moment
-- the crawl saw the session is a clock running ahead (Last compose 2030): it counts as that
-- moment, idle 0, where it read as minus three years (lifetimes cap it likewise).
WITH idle AS (
    SELECT p.stage,
        -- least skips a null: an unknown content_time stays unmeasured.
        CASE WHEN s.content_time IS NOT NULL THEN
            (epoch_ms(r.started_at) - epoch_ms(least(s.content_time, r.started_at)))
                / 3600000.0
        END AS idle_hours
    FROM point_sessions p
    JOIN snapshots s USING (snapshot_id)
    -- The run's time (a working tree's observed_at): a session taking part at its last commit
    -- (its folder gone) has that commit's date there, which a clock running ahead puts in 2030.
    JOIN run_points r ON r.run_id = p.run_id
    WHERE p.point = $point
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
ORDER BY grouping(stage) DESC, stage_rank(stage);
