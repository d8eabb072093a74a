-- Each session's distinct snapshots in time order (observations across runs and commits,
-- with a repeat of the same snapshot folded into one step), and each one's predecessor:
-- what the series rules (Status backward, fork IDs reused, ledger entries rewritten) compare.
-- A series is one session seen at one root: a replay's baseline and candidate, crawled from
-- two folders into one OUT, are two arms side by side, not one history.
CREATE OR REPLACE VIEW snapshot_sequence AS
WITH ordered AS (
    SELECT DISTINCT session_key, root, snapshot_id, observed_at, "commit", run_id FROM observations
),
stepped AS (
    SELECT *,
        lag(snapshot_id) OVER (
            PARTITION BY session_key, root ORDER BY observed_at, "commit", run_id
        ) AS previous_id
    FROM ordered
)
SELECT session_key, root, snapshot_id, observed_at,
    CASE WHEN "commit" IS NOT NULL THEN 'commit ' || left("commit", 12) ELSE 'run ' || run_id END AS seen_in,
    row_number() OVER (
        PARTITION BY session_key, root ORDER BY observed_at, "commit", run_id
    ) AS step
FROM stepped
WHERE previous_id IS DISTINCT FROM snapshot_id;

CREATE OR REPLACE VIEW snapshot_pairs AS
SELECT * FROM (
    SELECT session_key, root,
        lag(snapshot_id) OVER w AS before_id,
        lag(seen_in) OVER w AS before_seen,
        snapshot_id AS after_id,
        seen_in AS after_seen,
        step
    FROM snapshot_sequence
    WINDOW w AS (PARTITION BY session_key, root ORDER BY step)
)
WHERE before_id IS NOT NULL;
