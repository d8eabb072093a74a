-- Sessions by stage at every census point up to the chosen one ($point): every point and every
-- stage, 0 where none, so that a point with no sessions keeps its row as the report shows it.
WITH counts AS (
    SELECT point, stage, count(*) AS sessions
    FROM point_sessions
    WHERE position <= (SELECT position FROM points WHERE point = $point)
    GROUP BY point, stage
)
SELECT p.point, p.position, p.started_at, g.stage, coalesce(c.sessions, 0) AS sessions
FROM points p
CROSS JOIN stages g
LEFT JOIN counts c ON c.point = p.point AND c.stage = g.stage
WHERE p.position <= (SELECT position FROM points WHERE point = $point)
ORDER BY p.position, g.stage_rank;
