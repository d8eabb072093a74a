-- Forks raised and closed between the previous census point ($previous) and the chosen one
-- ($point), session by session (the sessions' snapshots at each point, matched as compare
-- matches its arms: matched_roots, and the commits first read since the previous point):
--   'raised'    open now or in a commit since, and not known at the previous point (listed or
--               resolved there), or the session is new;
--   'closed'    open at the previous point or raised since and, now, resolved by a ledger
--               entry or parked;
--   'vanished'  open at the previous point or raised since, and now gone from forks.md with no
--               ledger entry resolving it: the lifetimes censor it (never a close), so it is
--               not 'closed'.
-- A fork raised and closed between the two points' working trees, seen open only in a commit
-- of the night (--git-history), is both raised and closed, as the lifetimes, which read every
-- snapshot, count its close. Open, resolved and parked are what the fork lifetimes read:
-- fork_states_in.
WITH RECURSIVE now AS (
    SELECT session_key, root, repo, path, topic, snapshot_id FROM sessions WHERE point = $point
),
before AS (
    SELECT b.session_key, m.root, b.snapshot_id
    FROM sessions b
    JOIN matched_roots($previous, $point) m
        ON m.session_key = b.session_key AND m.root_before = b.root
    WHERE b.point = $previous
),
night AS (
    SELECT c.session_key, c.root, c.snapshot_id, c.observed_at, c."commit", c.parents
    FROM commit_nodes_in(
        (SELECT position FROM points WHERE point = $previous),
        (SELECT position FROM points WHERE point = $point)) c
    SEMI JOIN now n USING (session_key, root)
),
states AS (
    FROM fork_states_in((
        SELECT list(DISTINCT snapshot_id)
        FROM (
            SELECT snapshot_id FROM now
            UNION ALL SELECT snapshot_id FROM before
            UNION ALL SELECT snapshot_id FROM night
        )
    ))
),
open_before AS (
    SELECT b.session_key, b.root, s.fork_id, s.title
    FROM before b JOIN states s USING (snapshot_id)
    WHERE s.state = 'open'
),
known_before AS (
    SELECT b.session_key, b.root, s.fork_id
    FROM before b JOIN states s USING (snapshot_id)
),
state_now AS (
    SELECT n.session_key, n.root, s.fork_id, s.title, s.state
    FROM now n JOIN states s USING (snapshot_id)
),
open_night AS (
    SELECT g.session_key, g.root, s.fork_id, s.title, g.observed_at, g."commit"
    FROM night g JOIN states s USING (snapshot_id)
    WHERE s.state = 'open'
),
retold AS (
    -- The night's commits after each commit listing a fork open more than once, by ancestry
    -- (never by date, which a clock running ahead makes lie): a later title is a later one.
    SELECT o.session_key, o.root, o.fork_id, o."commit" AS earlier, g."commit" AS later
    FROM open_night o
    JOIN night g ON g.session_key = o.session_key AND g.root = o.root
        AND list_contains(g.parents, o."commit")
    WHERE (o.session_key, o.root, o.fork_id) IN (
        SELECT (session_key, root, fork_id) FROM open_night GROUP BY ALL HAVING count(*) > 1)
    UNION
    SELECT r.session_key, r.root, r.fork_id, r.earlier, g."commit"
    FROM retold r
    JOIN night g ON g.session_key = r.session_key AND g.root = r.root
        AND list_contains(g.parents, r.later)
),
last_open AS (
    -- Of them, those no other listing it open comes after (of two branches', the later dated).
    SELECT o.session_key, o.root, o.fork_id, arg_max(o.title, o.observed_at) AS title
    FROM open_night o
    WHERE NOT EXISTS (
        SELECT 1 FROM retold r
        JOIN open_night x ON x.session_key = r.session_key AND x.root = r.root
            AND x.fork_id = r.fork_id AND x."commit" = r.later
        WHERE r.session_key = o.session_key AND r.root = o.root AND r.fork_id = o.fork_id
            AND r.earlier = o."commit")
    GROUP BY o.session_key, o.root, o.fork_id
),
raised AS (
    SELECT DISTINCT session_key, root, fork_id
    FROM (
        SELECT session_key, root, fork_id FROM state_now WHERE state = 'open'
        UNION ALL
        SELECT session_key, root, fork_id FROM open_night
    ) o
    ANTI JOIN known_before k USING (session_key, root, fork_id)
),
tracked AS (
    SELECT session_key, root, fork_id FROM open_before
    UNION
    SELECT session_key, root, fork_id FROM raised
),
titles AS (
    -- Its title now, else as the commit since that last listed it open (by ancestry), else at
    -- the previous point.
    SELECT k.session_key, k.root, k.fork_id,
        coalesce(
            any_value(s.title),
            (SELECT any_value(o.title) FROM last_open o
             WHERE o.session_key = k.session_key AND o.root = k.root AND o.fork_id = k.fork_id),
            any_value(b.title)
        ) AS title
    FROM tracked k
    LEFT JOIN state_now s USING (session_key, root, fork_id)
    LEFT JOIN open_before b USING (session_key, root, fork_id)
    GROUP BY k.session_key, k.root, k.fork_id
)
SELECT 'raised' AS change, n.repo, n.path, n.topic, r.fork_id, t.title, r.root, r.session_key
FROM raised r
JOIN now n USING (session_key, root)
JOIN titles t USING (session_key, root, fork_id)
UNION ALL
SELECT CASE WHEN s.state IS NULL THEN 'vanished' ELSE 'closed' END,
    n.repo, n.path, n.topic, k.fork_id, t.title, k.root, k.session_key
FROM tracked k
JOIN now n USING (session_key, root)
JOIN titles t USING (session_key, root, fork_id)
LEFT JOIN state_now s USING (session_key, root, fork_id)
WHERE s.state IS DISTINCT FROM 'open'
ORDER BY 1, 2, 3, 4, 5, 6, 7;
