-- Forks still open at the chosen census point ($point), longest open first: the forks in $top
-- (session_key, root, fork_id: the point's longest_open, frozen by check, or ranked by
-- queries/stats/longest_open.sql), with their lifetime so far (hours, null when the raise time
-- is unknown), from the fork lifetimes of those few sessions alone, so every column has one
-- definition (queries/views/60_fork_lifetimes.sql). $sessions lists their session keys as a
-- constant: computed here from $top, DuckDB would group every fork of OUT first.
WITH top AS (
    SELECT unnest($top, recursive := true)
)
SELECT l.repo, l.topic, l.fork_id, l.title, l.raised_by, l.hours
FROM fork_lifetimes_of(
    (SELECT list(r) FROM (
        SELECT unnest(runs) AS r FROM points
        WHERE position <= (SELECT position FROM points WHERE point = $point))),
    $sessions
) l
SEMI JOIN top USING (session_key, root, fork_id)
ORDER BY l.hours DESC NULLS LAST, l.repo, l.topic, l.fork_id;
