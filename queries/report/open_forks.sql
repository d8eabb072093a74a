-- Forks still open at the chosen census point ($point), longest open first ($limit of them),
-- with their lifetime so far (hours, null when the raise time is unknown). The ranking reads
-- the point_forks census stats leaves for the point (queries/stats/point_forks.sql; equal
-- hours are taken in key order); what is shown comes from the fork lifetimes of those few
-- sessions alone, so every column has one definition (queries/views/60_fork_lifetimes.sql).
WITH top AS (
    SELECT open_session_key AS session_key, open_root AS root, open_fork_id AS fork_id
    FROM point_forks
    WHERE open_fork_id IS NOT NULL
    ORDER BY hours DESC NULLS LAST, session_key, root, fork_id
    LIMIT $limit
)
SELECT l.repo, l.topic, l.fork_id, l.title, l.raised_by, l.hours
FROM fork_lifetimes_of(
    (SELECT list(r) FROM (
        SELECT unnest(runs) AS r FROM points
        WHERE position <= (SELECT position FROM points WHERE point = $point))),
    (SELECT list(DISTINCT session_key) FROM top)
) l
SEMI JOIN top USING (session_key, root, fork_id)
ORDER BY l.hours DESC NULLS LAST, l.repo, l.topic, l.fork_id;
