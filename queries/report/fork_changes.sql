-- Forks raised and closed between the previous census point ($previous) and the chosen one
-- ($point), session by session (the sessions' snapshots at each point):
--   'raised'  listed open now, not listed at the previous point (or the session is new);
--   'closed'  open at the previous point and, now, resolved by a ledger entry, parked, or gone.
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
    SELECT n.session_key, n.root, n.repo, n.path, f.fork_id,
        CASE WHEN r.fork_id IS NOT NULL THEN 'resolved' WHEN f.marker = 'parked' THEN 'parked'
            WHEN f.fork_id IS NOT NULL THEN 'open' END AS state
    FROM now n
    LEFT JOIN forks f USING (snapshot_id)
    LEFT JOIN ledger_resolves r ON r.snapshot_id = n.snapshot_id AND r.fork_id = f.fork_id
)
SELECT 'raised' AS change, o.repo, o.path, o.topic, o.fork_id, o.title
FROM open_now o
ANTI JOIN listed_before l USING (session_key, root, fork_id)
UNION ALL
SELECT 'closed', n.repo, n.path, n.topic, b.fork_id, b.title
FROM open_before b
JOIN now n USING (session_key, root)
WHERE NOT EXISTS (
    SELECT 1 FROM state_now s
    WHERE s.session_key = b.session_key AND s.root = b.root AND s.fork_id = b.fork_id
        AND s.state = 'open'
)
ORDER BY 1, 2, 3, 4;
