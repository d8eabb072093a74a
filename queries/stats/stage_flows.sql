-- Flows between stages from each census point to the next, up to the chosen one ($point),
-- matched as compare matches its arms and the report its points (same_session). A session
-- missing on one side has stage 'absent' there (new at the later point, or gone from it).
WITH chosen AS (
    SELECT point, position, lead(point) OVER (ORDER BY position) AS next_point
    FROM points
    WHERE position <= (SELECT position FROM points WHERE point = $point)
),
before AS (
    SELECT c.point AS from_point, c.next_point AS to_point, c.position, s.session_key, s.root,
        s.stage, count(*) OVER (PARTITION BY c.point, s.session_key) AS twins
    FROM chosen c
    JOIN point_sessions s ON s.point = c.point
    WHERE c.next_point IS NOT NULL
),
after AS (
    SELECT c.point AS from_point, c.next_point AS to_point, c.position, s.session_key, s.root,
        s.stage, count(*) OVER (PARTITION BY c.point, s.session_key) AS twins
    FROM chosen c
    JOIN point_sessions s ON s.point = c.next_point
),
flows AS (
    SELECT coalesce(b.from_point, a.from_point) AS from_point,
        coalesce(b.to_point, a.to_point) AS to_point,
        coalesce(b.position, a.position) AS position,
        coalesce(b.stage, 'absent') AS from_stage,
        coalesce(a.stage, 'absent') AS to_stage
    FROM before b
    FULL JOIN after a
        ON a.from_point = b.from_point
        AND same_session(b.session_key, b.root, b.twins, a.session_key, a.root, a.twins)
)
SELECT from_point, to_point, from_stage, to_stage, count(*) AS sessions
FROM flows
GROUP BY from_point, to_point, position, from_stage, to_stage
ORDER BY position, flow_rank(from_stage), flow_rank(to_stage);
