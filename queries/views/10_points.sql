-- Census points (docs/time-model.md): the runs crawled with one --point (a night's shards)
-- count as one; a run crawled without --point is a point of its own. Points are ordered by
-- their first run's start; `position` 1 is the oldest.
CREATE OR REPLACE VIEW run_points AS
SELECT run_id, coalesce(point, run_id) AS point, started_at, finished_at, labels, roots
FROM runs;

CREATE OR REPLACE VIEW points AS
WITH grouped AS (
    SELECT point,
        min(started_at) AS started_at,
        max(finished_at) AS finished_at,
        list(run_id ORDER BY started_at, run_id) AS runs,
        -- The first run's labels stand for the point's (a shard's own label left out).
        map_from_entries(
            [e for e in map_entries(arg_min(labels, started_at)) if e.key <> 'shard']) AS labels
    FROM run_points
    GROUP BY point
),
checked AS (
    SELECT point, arg_max(ruleset, check_id) AS ruleset, max(checked_at) AS checked_at,
        max(check_id) AS check_id, arg_max(series_findings, check_id) AS check_series
    FROM checks
    GROUP BY point
)
SELECT g.point,
    CAST(row_number() OVER (ORDER BY g.started_at, g.point) AS INTEGER) AS position,
    g.started_at, g.finished_at, g.runs, g.labels,
    c.point IS NOT NULL AS checked, c.ruleset, c.checked_at, c.check_id, c.check_series
FROM grouped g
LEFT JOIN checked c USING (point);
