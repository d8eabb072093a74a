-- The baseline's ($b) sessions the candidate ($p) holds no session for, matched as compare
-- matches its arms (same_session): the candidate never read them, so their findings are
-- neither fixed nor still there.
WITH arms AS (
    SELECT a.cand, session_key, root, count(*) OVER (PARTITION BY a.cand, session_key) AS twins
    FROM point_sessions
    JOIN (VALUES ($b, false), ($p, true)) a(point, cand) USING (point)
)
SELECT b.session_key, b.root
FROM arms b
WHERE NOT b.cand
    AND NOT EXISTS (
        SELECT 1 FROM arms c
        WHERE c.cand AND same_session(b.session_key, b.root, b.twins, c.session_key, c.root, c.twins)
    );
