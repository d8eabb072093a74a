-- Compose lag (spec §7) at the chosen census point ($point), per stage and over all (stage
-- 'all'): the newest capture turn's time minus Last compose, in hours. Stale is as
-- BS-COMPOSE-02 decides it: zero or more (the compose must be strictly later than the newest
-- turn), a Last compose missing or unreadable beside turns, or a turn's or Last compose's time
-- the census could not read (a parse issue of that rule: the newest turn may be the unread
-- one, so no lag is measured), or `Last compose: never` beside turns. measured counts
-- sessions where every such time was read; never_composed counts the stale sessions with
-- `Last compose: never` (no lag is computed for them).
WITH read AS (
    SELECT p.stage, s.newest_turn_at, s.last_compose, s.last_compose_never,
        EXISTS (
            SELECT 1 FROM parse_issues i
            WHERE i.snapshot_id = s.snapshot_id AND i.rule_id = 'BS-COMPOSE-02'
        ) AS unread
    FROM point_sessions p
    JOIN snapshots s USING (snapshot_id)
    WHERE p.point = $point
),
lags AS (
    SELECT stage,
        CASE WHEN NOT unread
            THEN (epoch_ms(newest_turn_at) - epoch_ms(last_compose)) / 3600000.0 END AS lag_hours,
        coalesce(last_compose_never, false) AND newest_turn_at IS NOT NULL AS never_composed,
        unread OR (newest_turn_at IS NOT NULL AND last_compose IS NULL
            AND NOT coalesce(last_compose_never, false)) AS stale_unmeasured
    FROM read
)
SELECT
    CASE WHEN grouping(stage) = 1 THEN 'all' ELSE stage END AS stage,
    count(*) AS sessions,
    count(lag_hours) AS measured,
    count(*) FILTER (WHERE lag_hours >= 0 OR stale_unmeasured OR never_composed) AS stale,
    count(*) FILTER (WHERE never_composed) AS never_composed,
    quantile_cont(lag_hours, 0.5) AS lag_p50_hours,
    quantile_cont(lag_hours, 0.9) AS lag_p90_hours,
    max(lag_hours) AS lag_max_hours
FROM lags
GROUP BY GROUPING SETS ((), (stage))
ORDER BY grouping(stage) DESC, stage_rank(stage);
