-- Forks still open at the chosen census point ($point), longest open first: the forks in $top
-- (session_key, root, fork_id, rank, hours: the point's longest_open, frozen by check, or
-- ranked by queries/stats/longest_open.sql), in their rank, with their lifetime so far as
-- ranked (hours, null when the raise time is unknown: frozen, a prune of the history before
-- the point changes them not), and what the fork lifetimes of those few sessions alone say of
-- them (queries/views/60_fork_lifetimes.sql). $sessions lists their session keys as a
-- constant: computed here from $top, DuckDB would group every fork of OUT first.
WITH top AS (
    SELECT unnest($top, recursive := true)
)
SELECT l.repo, l.topic, l.fork_id, l.title, l.raised_by, t.hours
FROM fork_lifetimes_of(
    (SELECT list(r) FROM (
        SELECT unnest(runs) AS r FROM points
        WHERE position <= (SELECT position FROM points WHERE point = $point))),
    $sessions
) l
JOIN top t USING (session_key, root, fork_id)
ORDER BY t.rank;
