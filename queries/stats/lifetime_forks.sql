-- The forks of a census point's sessions with their lifetimes, as check freezes them
-- (lifetime_forks): for every series of lifetime_series (the point's, from
-- lifetime_series.sql) one row with fork_id null (the series' row: when it was last observed,
-- and as which snapshot) and one per fork, over the history in $runs (the point's runs and
-- every earlier one's).
--
-- A carried series' rows are the previous point's (basis_forks), its series' row moved on to
-- its latest time. Every other series ($changed: their keys; null when none is carried, a
-- first check, which is the plain pass over every session) is computed by fork_lifetimes_of,
-- the one definition.
WITH carried AS (
    SELECT b.session_key, b.root, b.fork_id, b.hours, b.syncs, b.close_kind, b.raised_by,
        b.still_open,
        CASE WHEN b.fork_id IS NULL THEN s.last_at END AS last_at,
        b.last_snapshot
    FROM basis_forks b
    JOIN lifetime_series s USING (session_key, root)
    WHERE s.carried
),
changed AS (
    SELECT session_key, root FROM lifetime_series WHERE NOT carried
),
seen AS (
    -- The changed series' observations over the history, for their rows' latest time: a
    -- commit's no later than the start of the run that saw it, as fork_lifetimes_of orders it
    -- (a commit dated 2030 was the latest until 2030, so its series was never carried).
    -- Two branches, as in fork_lifetimes_of: a list of keys filters before anything is joined.
    SELECT o.session_key, o.root,
        -- least skips a null: an observation without a time stays one.
        CASE WHEN o.observed_at IS NOT NULL THEN least(o.observed_at, r.started_at) END
            AS observed_at,
        o.snapshot_id
    FROM (
        FROM observations WHERE $changed IS NULL
        UNION ALL
        FROM observations SEMI JOIN (SELECT unnest($changed) AS session_key) USING (session_key)
    ) o
    JOIN run_points r USING (run_id)
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
FROM fork_lifetimes_of($runs, $changed) l
SEMI JOIN changed USING (session_key, root)
