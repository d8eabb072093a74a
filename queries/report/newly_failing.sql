-- Sessions failing at the chosen census point ($point) that were clean at the previous one
-- ($previous) or not there at all, most failing rules first ($limit of them), each with its
-- findings at its own gate; `new_rule` marks a rule the session did not fail before. The
-- sessions are matched as compare matches its arms (matched_roots).
WITH matched AS (FROM matched_roots($previous, $point)),
before AS (
    SELECT b.session_key, m.root, b.clean
    FROM sessions b
    JOIN matched m ON m.session_key = b.session_key AND m.root_before = b.root
    WHERE b.point = $previous
),
newly AS (
    SELECT n.session_key, n.root, n.repo, n.repo_path, n.path, n.stage, n.gate,
        n.failing_rules
    FROM sessions n
    LEFT JOIN before b USING (session_key, root)
    WHERE n.point = $point AND n.failing_rules > 0 AND coalesce(b.clean, true)
    ORDER BY n.failing_rules DESC, n.repo, n.path, n.root
    LIMIT $limit
),
failed_before AS (
    SELECT DISTINCT f.session_key, m.root, f.rule_id
    FROM findings f
    JOIN matched m ON m.session_key = f.session_key AND m.root_before = f.root
    SEMI JOIN newly w ON w.session_key = f.session_key AND w.root = m.root
    WHERE f.point = $previous AND f.status = 'fail'
)
SELECT w.session_key, w.root, w.repo, w.repo_path, w.path, w.stage, w.gate, w.failing_rules,
    f.rule_id, f.file, f.line, f.message, f.source,
    p.rule_id IS NULL AS new_rule
FROM newly w
JOIN findings f
    ON f.point = $point AND f.session_key = w.session_key AND f.root = w.root
LEFT JOIN failed_before p
    ON p.session_key = w.session_key AND p.root = w.root AND p.rule_id = f.rule_id
WHERE f.status = 'fail'
ORDER BY w.failing_rules DESC, w.repo, w.path, w.root, f.rule_id, f.line NULLS FIRST;
