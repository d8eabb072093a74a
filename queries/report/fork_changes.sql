-- Forks raised and closed between the previous census point ($previous) and the chosen one
-- ($point), session by session (the sessions' snapshots at each point, matched as compare
-- matches its arms: matched_roots):
--   'raised'    open now, not listed at the previous point (or the session is new);
--   'closed'    open at the previous point and, now, resolved by a ledger entry or parked;
--   'vanished'  open at the previous point and now gone from forks.md with no ledger entry
--               resolving it: the lifetimes censor it (never a close), so it is not 'closed'.
-- Open, resolved and parked are what the fork lifetimes read: fork_states_in.
WITH now AS (
    SELECT session_key, root, repo, path, topic, snapshot_id FROM sessions WHERE point = $point
),
before AS (
    SELECT b.session_key, m.root, b.snapshot_id
    FROM sessions b
    JOIN matched_roots($previous, $point) m
        ON m.session_key = b.session_key AND m.root_before = b.root
    WHERE b.point = $previous
),
states AS (
    FROM fork_states_in((
        SELECT list(DISTINCT snapshot_id)
        FROM (SELECT snapshot_id FROM now UNION ALL SELECT snapshot_id FROM before)
    ))
),
open_before AS (
    SELECT b.session_key, b.root, s.fork_id, s.title
    FROM before b JOIN states s USING (snapshot_id)
    WHERE s.state = 'open'
),
state_now AS (
    SELECT n.session_key, n.root, n.repo, n.path, n.topic, s.fork_id, s.title, s.state
    FROM now n JOIN states s USING (snapshot_id)
),
listed_before AS (
    SELECT b.session_key, b.root, f.fork_id
    FROM before b JOIN forks f USING (snapshot_id)
    WHERE f.fork_id IS NOT NULL
)
SELECT 'raised' AS change, o.repo, o.path, o.topic, o.fork_id, o.title,
    o.root, o.session_key
FROM state_now o
ANTI JOIN listed_before l USING (session_key, root, fork_id)
WHERE o.state = 'open'
UNION ALL
SELECT CASE WHEN s.state IS NULL THEN 'vanished' ELSE 'closed' END,
    n.repo, n.path, n.topic, b.fork_id, b.title, root, session_key
FROM open_before b
JOIN now n USING (session_key, root)
LEFT JOIN state_now s USING (session_key, root, fork_id)
WHERE s.state IS DISTINCT FROM 'open'
ORDER BY 1, 2, 3, 4, 5, 6, 7;
