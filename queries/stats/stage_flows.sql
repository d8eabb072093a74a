-- Flows between stages across consecutive runs (spec §7), matched by session_key, among the
-- chosen runs (? = run ids, VARCHAR[]) in start order. A session missing from one side of a
-- pair has stage 'absent' there (new in the later run, or gone from it).
WITH chosen AS (
    SELECT r.run_id, r.started_at,
        lead(r.run_id) OVER (ORDER BY r.started_at, r.run_id) AS next_run
    FROM runs r
    WHERE list_contains(?::VARCHAR[], r.run_id)
),
pairs AS (
    SELECT run_id AS from_run, next_run AS to_run, started_at FROM chosen WHERE next_run IS NOT NULL
),
staged AS (
    SELECT o.run_id, o.session_key, s.stage
    FROM latest_observations o
    JOIN snapshots s USING (snapshot_id)
    WHERE o.run_id IN (SELECT run_id FROM chosen)
),
before AS (
    SELECT p.from_run, p.to_run, p.started_at, x.session_key, x.stage
    FROM pairs p JOIN staged x ON x.run_id = p.from_run
),
after AS (
    SELECT p.from_run, p.to_run, p.started_at, x.session_key, x.stage
    FROM pairs p JOIN staged x ON x.run_id = p.to_run
),
flows AS (
    SELECT coalesce(b.from_run, a.from_run) AS from_run,
        coalesce(b.to_run, a.to_run) AS to_run,
        coalesce(b.started_at, a.started_at) AS started_at,
        coalesce(b.stage, 'absent') AS from_stage,
        coalesce(a.stage, 'absent') AS to_stage
    FROM before b
    FULL JOIN after a
        ON a.from_run = b.from_run AND a.to_run = b.to_run AND a.session_key = b.session_key
)
SELECT from_run, to_run, from_stage, to_stage, sessions
FROM (
    SELECT from_run, to_run, from_stage, to_stage, min(started_at) AS started_at,
        count(*) AS sessions
    FROM flows
    GROUP BY from_run, to_run, from_stage, to_stage
)
ORDER BY started_at, from_run,
    list_position(['absent', 'open', 'converging', 'applied', 'harvested'], from_stage),
    list_position(['absent', 'open', 'converging', 'applied', 'harvested'], to_stage);
