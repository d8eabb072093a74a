-- The headline figures of the chosen census point ($point) and of the previous one
-- ($previous, may match nothing): sessions, repositories, clean and failing sessions, and the
-- forks open in the point's sessions.
SELECT point, count(*) AS sessions, count(DISTINCT repo) AS repos,
    count(*) FILTER (WHERE clean) AS clean,
    count(*) FILTER (WHERE failing_rules > 0) AS failing,
    coalesce(sum(forks_open), 0) AS forks_open
FROM sessions
WHERE point IN ($point, $previous)
GROUP BY point;
