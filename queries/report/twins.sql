-- Sessions (session_key) the chosen census point ($point) or the previous one ($previous) saw
-- under more than one root: one repository crawled under two roots is two sessions, which the
-- page tells apart by naming each one's root.
SELECT DISTINCT session_key
FROM sessions
WHERE point IN ($point, $previous)
GROUP BY point, session_key
HAVING count(DISTINCT root) > 1;
