-- The series a census point's runs ($point_runs) saw as a working tree, each marked carried
-- when its fork lifetimes cannot have changed since the previous point's rows (basis_forks,
-- empty when it has none): the point's runs saw it only as a working tree, always as the
-- snapshot of its latest earlier observation, and after it in time. Its new observations are
-- then repeats of its last snapshot, which fork_lifetimes counts once, so they change nothing.
-- last_at: its latest observation in the point's runs (a carried series' row moves on to it).
-- check reads the series not carried first, so that lifetime_forks.sql asks fork_lifetimes_of
-- for them by a list of keys (a list DuckDB sees before it plans, so it reads only theirs).
WITH now AS (
    SELECT session_key, root,
        min(snapshot_id) AS lo, max(snapshot_id) AS hi,
        min(observed_at) AS first_at, max(observed_at) AS last_at,
        count(observed_at) = count(*) AS timed,
        bool_or("commit" IS NOT NULL) AS commits,
        bool_or("commit" IS NULL) AS working
    FROM observations
    WHERE list_contains($point_runs, run_id)
    GROUP BY session_key, root
)
SELECT n.session_key, n.root, n.last_at,
    coalesce(
        NOT n.commits AND n.timed AND n.lo = n.hi AND b.last_snapshot = n.lo
            AND b.last_at < n.first_at,
        false) AS carried
FROM now n
LEFT JOIN basis_forks b
    ON b.session_key = n.session_key AND b.root = n.root AND b.fork_id IS NULL
WHERE n.working
