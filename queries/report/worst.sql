-- The sessions with the most failing rules at their own gate at the chosen census point
-- ($point), worst first ($limit of them), each with its findings at that gate.
WITH worst AS (
    SELECT session_key, root, repo, repo_path, path, stage, gate, failing_rules
    FROM sessions
    WHERE point = $point AND failing_rules > 0
    ORDER BY failing_rules DESC, repo, path, root
    LIMIT $limit
)
SELECT w.session_key, w.root, w.repo, w.repo_path, w.path, w.stage, w.gate, w.failing_rules,
    f.rule_id, f.file, f.line, f.message, f.source
FROM worst w
JOIN findings f
    ON f.point = $point AND f.session_key = w.session_key AND f.root = w.root
WHERE f.status = 'fail'
ORDER BY w.failing_rules DESC, w.repo, w.path, w.root, f.rule_id, f.line NULLS FIRST;
