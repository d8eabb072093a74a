-- A session's history (docs/time-model.md), as nodes and the pairs the series rules compare.
-- A series is one session (session_key) seen under one crawl root: a replay's arms crawled
-- from two folders are two series side by side, not one history.
--
-- Nodes: each commit that changed the session (with --git-history), once, at the census point
-- whose crawl first saw it; and the session's working tree at each census point (its latest
-- observation in the point's runs).
CREATE OR REPLACE VIEW working_nodes AS
SELECT o.session_key, o.root, o.snapshot_id, o."commit", o.parents, o.observed_at, r.point,
    p.position, o.run_id, o.repo, o.repo_path, o.path, o.topic, o.location,
    'run ' || o.run_id AS seen_in
FROM observations o
JOIN run_points r USING (run_id)
JOIN points p USING (point)
WHERE o."commit" IS NULL
QUALIFY row_number() OVER (
    PARTITION BY o.session_key, o.root, r.point ORDER BY r.started_at DESC, o.run_id DESC) = 1;

CREATE OR REPLACE VIEW history_nodes AS
SELECT o.session_key, o.root, o.snapshot_id, o."commit", o.parents, o.observed_at, r.point,
    p.position, o.run_id, o.repo, o.repo_path, o.path, o.topic, o.location,
    'commit ' || left(o."commit", 12) AS seen_in
FROM observations o
JOIN run_points r USING (run_id)
JOIN points p USING (point)
WHERE o."commit" IS NOT NULL
QUALIFY row_number() OVER (
    PARTITION BY o.session_key, o.root, o."commit" ORDER BY p.position, r.started_at, o.run_id) = 1
UNION ALL
SELECT * FROM working_nodes;

-- Pairs (before → after) along which content is compared, never by commit date:
--   a commit and each nearest earlier commit (by git ancestry, through merges) that changed
--   the session; the working tree at a point and the working tree at the session's previous
--   point; the working tree and the session's commits at HEAD that the previous working tree
--   did not already have (so an uncommitted step is counted once, not every night).
-- A pair belongs to the census point of its later node; pairs of identical content are left
-- out (nothing can have changed).
CREATE OR REPLACE VIEW history_pairs AS
WITH working AS (
    SELECT *,
        lag(snapshot_id) OVER w AS previous_id,
        lag(seen_in) OVER w AS previous_seen,
        lag(parents) OVER w AS previous_parents
    FROM working_nodes
    WINDOW w AS (PARTITION BY session_key, root ORDER BY position)
),
heads AS (
    SELECT n.session_key, n.root, n.point, n.snapshot_id, n.seen_in, unnest(n.parents) AS parent
    FROM history_nodes n
    WHERE n."commit" IS NOT NULL
    UNION ALL
    SELECT session_key, root, point, snapshot_id, seen_in,
        unnest([c for c in parents if NOT list_contains(coalesce(previous_parents, []), c)])
    FROM working
),
pairs AS (
    SELECT h.session_key, h.root, h.point, b.snapshot_id AS before_id, b.seen_in AS before_seen,
        h.snapshot_id AS after_id, h.seen_in AS after_seen
    FROM heads h
    JOIN history_nodes b
        ON b.session_key = h.session_key AND b.root = h.root AND b."commit" = h.parent
    UNION ALL
    SELECT session_key, root, point, previous_id, previous_seen, snapshot_id, seen_in
    FROM working
    WHERE previous_id IS NOT NULL
)
SELECT row_number() OVER (ORDER BY session_key, root, point, before_seen, after_seen) AS pair_id,
    *
FROM pairs
WHERE before_id <> after_id;
