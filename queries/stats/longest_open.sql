-- A census point's longest-open forks ($limit of them), from the point_forks of its fork
-- lifetimes pass (point_forks.sql: a fork still open, and not vanished, carries its key),
-- longest first, equal hours in key order. check freezes them (the longest_open table); the
-- report lists them (queries/report/open_forks.sql).
SELECT row_number() OVER (
        ORDER BY hours DESC NULLS LAST, open_session_key, open_root, open_fork_id) AS rank,
    open_session_key AS session_key, open_root AS root, open_fork_id AS fork_id, hours
FROM point_forks
WHERE open_fork_id IS NOT NULL
ORDER BY rank
LIMIT $limit;
