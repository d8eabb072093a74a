-- Sessions whose verdict or stage changed between the previous census point ($previous) and
-- the chosen one ($point), matched as compare matches its arms (matched_roots):
--   change 'newly failing'  clean (or absent) at the previous point, failing now;
--          'newly clean'    failing at the previous point, clean now;
--          'opened'         not at the previous point (a new session);
--          'advanced'       a later stage than before ('harvested' when it reached history);
--          'backward'       an earlier stage than before;
--          'gone'           at the previous point, not at this one.
-- A session can appear twice (a verdict change and a stage change); one under two roots is two
-- sessions, as everywhere (session_key, root).
WITH now AS (SELECT * FROM sessions WHERE point = $point),
before AS (
    SELECT b.* REPLACE (m.root AS root)
    FROM sessions b
    JOIN matched_roots($previous, $point) m
        ON m.session_key = b.session_key AND m.root_before = b.root
    WHERE b.point = $previous
),
pairs AS (
    SELECT coalesce(n.session_key, b.session_key) AS session_key,
        coalesce(n.root, b.root) AS root,
        coalesce(n.repo, b.repo) AS repo,
        coalesce(n.path, b.path) AS path,
        coalesce(n.topic, b.topic) AS topic,
        b.stage AS stage_before, n.stage AS stage_now,
        b.clean AS clean_before, n.clean AS clean_now,
        n.failing_rules
    FROM now n
    FULL JOIN before b USING (session_key, root)
)
SELECT session_key, root, repo, path, topic, stage_before, stage_now, failing_rules,
    CASE WHEN clean_now THEN 'newly clean' ELSE 'newly failing' END AS change
FROM pairs
WHERE stage_now IS NOT NULL
    AND ((clean_now = false AND coalesce(clean_before, true))
        OR (clean_now AND clean_before = false))
UNION ALL
SELECT session_key, root, repo, path, topic, stage_before, stage_now, failing_rules,
    CASE
        WHEN stage_before IS NULL THEN 'opened'
        WHEN stage_now IS NULL THEN 'gone'
        WHEN stage_rank(stage_now) > stage_rank(stage_before) AND stage_now = 'harvested'
            THEN 'harvested'
        WHEN stage_rank(stage_now) > stage_rank(stage_before) THEN 'advanced'
        ELSE 'backward'
    END
FROM pairs
WHERE stage_before IS DISTINCT FROM stage_now
ORDER BY change, repo, path, root;
