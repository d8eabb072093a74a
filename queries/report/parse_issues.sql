-- Parse issues of the chosen census point ($point): those of its sessions' snapshots, and
-- those its runs met in their roots (unreadable files, damaged archives), by code, with up
-- to $examples examples each. A root's issues are those of the latest run of the point that
-- crawled it (per shard, as shards divide them): a rerun of the night replaces what an earlier
-- run saw there, never adds to it (a damaged archive crawled three times was three issues,
-- and a folder renamed right between two runs stayed misnamed; found by a hunt).
WITH standing AS (
    SELECT root, shard, max(run_id) AS run_id
    FROM (
        SELECT run_id, unnest(roots) AS root,
            [e.value FOR e IN map_entries(labels) IF e.key = 'shard'][1] AS shard
        FROM run_points
        WHERE point = $point
    )
    GROUP BY root, shard
),
point_issues AS (
    SELECT i.code, i.file, i.line, i.message, s.repo || ' / ' || s.path AS "where"
    FROM parse_issues i
    JOIN (SELECT DISTINCT snapshot_id, repo, path FROM sessions WHERE point = $point) s
        USING (snapshot_id)
    UNION ALL
    SELECT i.code, i.file, i.line, i.message, 'run ' || i.run_id
    FROM parse_issues i
    SEMI JOIN standing r
        ON r.run_id = i.run_id AND (i.file = r.root OR starts_with(i.file, r.root || ':'))
    WHERE i.snapshot_id IS NULL
)
SELECT code, count(*) OVER (PARTITION BY code) AS issues, "where", file, line, message
FROM point_issues
QUALIFY row_number() OVER (PARTITION BY code ORDER BY "where", file, line) <= $examples
ORDER BY issues DESC, code, "where", file, line;
