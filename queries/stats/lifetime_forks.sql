-- The forks of a census point's sessions with their lifetimes, as check freezes them
-- (lifetime_forks): for every series the point's runs ($point_runs) saw as a working tree, one
-- row with fork_id null (the series' row: when it was last observed, and as which snapshot)
-- and one per fork, over the history in $runs (the point's runs and every earlier point's).
--
-- basis_forks holds the previous point's rows (empty when it has none). A series whose
-- lifetimes cannot have changed is carried from there instead of computed again: the point's
-- runs saw it only as a working tree, always as the snapshot of its latest earlier
-- observation, and after it in time. Its new observations are then repeats of its last
-- snapshot, which fork_lifetimes counts once, so they change nothing; the series' row moves
-- its time on. Every other series is computed by fork_lifetimes_of, the one definition.
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
),
unchanged AS (
    SELECT n.session_key, n.root, n.last_at
    FROM now n
    JOIN basis_forks b
        ON b.session_key = n.session_key AND b.root = n.root AND b.fork_id IS NULL
    WHERE n.working AND NOT n.commits AND n.timed
        AND n.lo = n.hi AND b.last_snapshot = n.lo AND b.last_at < n.first_at
),
carried AS (
    SELECT b.session_key, b.root, b.fork_id, b.hours, b.syncs, b.close_kind, b.raised_by,
        b.still_open,
        CASE WHEN b.fork_id IS NULL THEN u.last_at END AS last_at,
        b.last_snapshot
    FROM basis_forks b
    JOIN unchanged u USING (session_key, root)
),
changed AS (
    SELECT session_key, root
    FROM now
    ANTI JOIN unchanged USING (session_key, root)
    WHERE working
),
seen AS (
    -- The changed series' observations over the history, for their rows' latest time.
    SELECT o.session_key, o.root, o.observed_at, o.snapshot_id
    FROM observations o
    SEMI JOIN changed USING (session_key, root)
    WHERE list_contains($runs, o.run_id)
),
latest AS (
    SELECT session_key, root, max(observed_at) AS last_at, count(observed_at) = count(*) AS timed
    FROM seen
    GROUP BY session_key, root
),
series AS (
    SELECT c.session_key, c.root, l.last_at,
        CASE WHEN l.timed AND min(s.snapshot_id) = max(s.snapshot_id)
            THEN min(s.snapshot_id) END AS last_snapshot
    FROM changed c
    LEFT JOIN latest l USING (session_key, root)
    LEFT JOIN seen s
        ON s.session_key = c.session_key AND s.root = c.root AND s.observed_at = l.last_at
    GROUP BY c.session_key, c.root, l.last_at, l.timed
)
SELECT * FROM carried
UNION ALL
SELECT session_key, root, NULL, NULL, NULL, NULL, NULL, false, last_at, last_snapshot
FROM series
UNION ALL
SELECT l.session_key, l.root, l.fork_id, l.hours, l.syncs, l.close_kind, l.raised_by,
    l.censored AND NOT l.vanished, NULL, NULL
FROM fork_lifetimes_of(
    $runs,
    -- Every session when nothing is carried (a first check): the plain pass, no key filter;
    -- none at all when every session is (list() of no rows is null, which means every one).
    CASE WHEN EXISTS (SELECT 1 FROM unchanged)
        THEN coalesce((SELECT list(session_key) FROM changed), [])
    END
) l
SEMI JOIN changed USING (session_key, root)
