-- Compose lag (spec §7) at the chosen census point ($point), per stage and over all (stage
-- 'all'): the newest capture turn's time minus Last compose, in hours. Zero or more is stale,
-- as BS-COMPOSE-02 decides it (the compose must be strictly later than the newest turn); measured counts sessions where both times parse;
-- never_composed counts sessions with capture turns and `Last compose: never`.
WITH lags AS (
    SELECT p.stage,
        (epoch_ms(s.newest_turn_at) - epoch_ms(s.last_compose)) / 3600000.0 AS lag_hours,
        coalesce(s.last_compose_never, false) AND s.newest_turn_at IS NOT NULL AS never_composed
    FROM point_sessions p
    JOIN snapshots s USING (snapshot_id)
    WHERE p.point = $point
)
SELECT
    CASE WHEN grouping(stage) = 1 THEN 'all' ELSE stage END AS stage,
    count(*) AS sessions,
    count(lag_hours) AS measured,
    count(*) FILTER (WHERE lag_hours >= 0) AS stale,
    count(*) FILTER (WHERE never_composed) AS never_composed,
    quantile_cont(lag_hours, 0.5) AS lag_p50_hours,
    quantile_cont(lag_hours, 0.9) AS lag_p90_hours,
    max(lag_hours) AS lag_max_hours
FROM lags
GROUP BY GROUPING SETS ((), (stage))
ORDER BY grouping(stage) DESC, stage_rank(stage);
