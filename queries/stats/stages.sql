-- Sessions by stage at every census point up to the chosen one ($point).
SELECT s.point, s.position, p.started_at, s.stage, count(*) AS sessions
FROM point_sessions s
JOIN points p USING (point)
WHERE s.position <= (SELECT position FROM points WHERE point = $point)
GROUP BY s.point, s.position, p.started_at, s.stage
ORDER BY s.position, stage_rank(s.stage);
