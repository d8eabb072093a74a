-- Forks still open at the chosen census point ($point), longest open first ($limit of them),
-- with their lifetime so far (hours, null when the raise time is unknown).
SELECT l.repo, l.topic, l.fork_id, l.title, l.raised_by, l.hours
FROM fork_lifetimes_for((
    SELECT list(r) FROM (
        SELECT unnest(runs) AS r FROM points
        WHERE position <= (SELECT position FROM points WHERE point = $point))
)) l
SEMI JOIN (SELECT session_key, root FROM sessions WHERE point = $point) s
    USING (session_key, root)
WHERE l.censored AND NOT l.vanished
ORDER BY l.hours DESC NULLS LAST, l.repo, l.topic, l.fork_id
LIMIT $limit;
