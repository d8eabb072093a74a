-- A baseline census point ($b) against a candidate ($p): each arm's sessions, and how many
-- of each arm's the other arm holds no session for, matched as compare matches its arms
-- (same_session). A replay that lost some sessions is compared on the others; this says how many.
WITH arms AS (
    -- (A point compared with itself is both arms.)
    SELECT a.cand, session_key, root, count(*) OVER (PARTITION BY a.cand, session_key) AS twins
    FROM point_sessions
    JOIN (VALUES ($b, false), ($p, true)) a(point, cand) USING (point)
),
b AS (FROM arms WHERE NOT cand),
c AS (FROM arms WHERE cand),
pairs AS (
    SELECT b.session_key AS b_key, c.session_key AS c_key
    FROM b
    FULL JOIN c ON same_session(b.session_key, b.root, b.twins, c.session_key, c.root, c.twins)
)
SELECT
    (SELECT count(*) FROM b) AS baseline,
    (SELECT count(*) FROM c) AS candidate,
    count(*) FILTER (WHERE c_key IS NULL) AS baseline_only,
    count(*) FILTER (WHERE b_key IS NULL) AS candidate_only
FROM pairs;
