-- Forks raised and closed between the previous census point ($previous) and the chosen one
-- ($point), session by session (the sessions' snapshots at each point):
--   'raised'    listed open now, not listed at the previous point (or the session is new);
--   'closed'    open at the previous point and, now, resolved by a ledger entry or parked;
--   'vanished'  open at the previous point and now gone from forks.md with no ledger entry
--               resolving it: the lifetimes censor it (never a close), so it is not 'closed'.
-- Open means what the fork lifetimes mean: listed [open] and resolved by no ledger entry of
-- the same snapshot (a fork both listed open and resolved is resolved, at either point).
WITH now AS (
    SELECT session_key, root, repo, path, topic, snapshot_id FROM sessions WHERE point = $point
),
before AS (SELECT session_key, root, snapshot_id FROM sessions WHERE point = $previous),
open_forks AS (
    SELECT f.snapshot_id, f.fork_id, f.title
    FROM forks f
    WHERE f.marker = 'open' AND f.fork_id IS NOT NULL
        AND f.snapshot_id IN (SELECT snapshot_id FROM now UNION SELECT snapshot_id FROM before)
        AND NOT EXISTS (
            SELECT 1 FROM ledger_resolves r
            WHERE r.snapshot_id = f.snapshot_id AND r.fork_id = f.fork_id
        )
),
open_now AS (
    SELECT n.session_key, n.root, n.repo, n.path, n.topic, f.fork_id, f.title
    FROM now n JOIN open_forks f USING (snapshot_id)
),
open_before AS (
    SELECT b.session_key, b.root, f.fork_id, f.title
    FROM before b JOIN open_forks f USING (snapshot_id)
),
listed_before AS (
    SELECT b.session_key, b.root, f.fork_id
    FROM before b JOIN forks f USING (snapshot_id)
    WHERE f.fork_id IS NOT NULL
),
state_now AS (
    -- Each fork's state now, as the lifetimes decide it: resolved, else open, else parked
    -- (NULL when the snapshot neither lists nor resolves it: gone).
    SELECT session_key, root, fork_id,
        CASE
            WHEN bool_or(resolved) THEN 'resolved'
            WHEN bool_or(NOT resolved AND marker IS DISTINCT FROM 'parked') THEN 'open'
            ELSE 'parked'
        END AS state
    FROM (
        SELECT n.session_key, n.root, f.fork_id, f.marker, false AS resolved
        FROM now n JOIN forks f USING (snapshot_id)
        WHERE f.fork_id IS NOT NULL
        UNION ALL
        SELECT n.session_key, n.root, r.fork_id, NULL, true
        FROM now n JOIN ledger_resolves r USING (snapshot_id)
    )
    GROUP BY session_key, root, fork_id
)
SELECT 'raised' AS change, o.repo, o.path, o.topic, o.fork_id, o.title
FROM open_now o
ANTI JOIN listed_before l USING (session_key, root, fork_id)
UNION ALL
SELECT CASE WHEN s.state IS NULL THEN 'vanished' ELSE 'closed' END,
    n.repo, n.path, n.topic, b.fork_id, b.title
FROM open_before b
JOIN now n USING (session_key, root)
LEFT JOIN state_now s USING (session_key, root, fork_id)
WHERE s.state IS DISTINCT FROM 'open'
ORDER BY 1, 2, 3, 4;
