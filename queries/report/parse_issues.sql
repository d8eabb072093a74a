-- Parse issues of the chosen census point ($point): those of its sessions' snapshots, and
-- those its runs met in their roots (unreadable files, damaged archives), by code, with up
-- to $examples examples each.
WITH point_issues AS (
    SELECT i.code, i.file, i.line, i.message, s.repo || ' / ' || s.path AS "where"
    FROM parse_issues i
    JOIN (SELECT DISTINCT snapshot_id, repo, path FROM sessions WHERE point = $point) s
        USING (snapshot_id)
    UNION ALL
    SELECT i.code, i.file, i.line, i.message, 'run ' || i.run_id
    FROM parse_issues i
    WHERE i.snapshot_id IS NULL
        AND i.run_id IN (SELECT unnest(runs) FROM points WHERE point = $point)
)
SELECT code, count(*) OVER (PARTITION BY code) AS issues, "where", file, line, message
FROM point_issues
QUALIFY row_number() OVER (PARTITION BY code ORDER BY "where", file, line) <= $examples
ORDER BY issues DESC, code, "where", file, line;
