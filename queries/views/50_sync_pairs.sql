-- One row per snapshot and sync ID: the dispatch paired with its result (spec §6).
-- A dispatch with no result is in flight (result null); a result with no dispatch keeps its
-- row with the dispatch columns null. Where a sync ID has several dispatch or result lines
-- (BS-SYNC-01 fails), the first of each in file order is used, every column from that line
-- (arg_min_null: arg_min skips NULLs, and took an unreadable first line's time from the
-- second), and the counts say how many.
--
-- sync_pairs_of(snapshot_ids) pairs them for those snapshots only (NULL: every one), so that
-- a pass over a few sessions (fork_lifetimes_of) does not pair every snapshot's syncs; the view
-- sync_pairs is the every-snapshot case. A snapshot's pairs depend on its own events alone.
CREATE OR REPLACE MACRO sync_pairs_of(snapshot_ids) AS TABLE
WITH events AS (
    -- Two branches, so that a list of snapshots filters the events before they are grouped.
    SELECT * FROM sync_events WHERE snapshot_ids IS NULL
    UNION ALL
    SELECT * FROM sync_events
    SEMI JOIN (SELECT unnest(snapshot_ids) AS snapshot_id) USING (snapshot_id)
),
dispatches AS (
    SELECT snapshot_id, sync_id,
        min(sync_num) AS sync_num,
        arg_min_null(gate, line) AS gate,
        arg_min_null(scope, line) AS scope,
        arg_min_null("at", line) AS dispatched_at,
        min(line) AS dispatch_line,
        max(line) AS last_dispatch_line,
        count(*) AS dispatches
    FROM events
    WHERE kind = 'dispatch'
    GROUP BY snapshot_id, sync_id
),
results AS (
    SELECT snapshot_id, sync_id,
        min(sync_num) AS sync_num,
        arg_min_null(result, line) AS result,
        arg_min_null("at", line) AS result_at,
        arg_min_null(edits, line) AS edits,
        arg_min_null(new_forks, line) AS new_forks,
        arg_min_null(open_forks, line) AS open_forks,
        arg_min_null(summary, line) AS summary,
        min(line) AS result_line,
        count(*) AS results,
        count(*) FILTER (WHERE result = 'failed') AS failed_results
    FROM events
    WHERE kind = 'result'
    GROUP BY snapshot_id, sync_id
)
SELECT
    snapshot_id,
    sync_id,
    d.gate,
    d.scope,
    d.dispatched_at,
    r.result,
    r.result_at,
    -- A result written or timestamped before its dispatch is no reply to it: no latency, so a
    -- negative one is never shown (sync health counts the sync misfiled).
    CASE WHEN r.result_line > d.dispatch_line AND r.result_at >= d.dispatched_at
        THEN (epoch_ms(r.result_at) - epoch_ms(d.dispatched_at)) / 1000.0 END AS latency_s,
    r.edits,
    r.new_forks,
    r.open_forks,
    coalesce(d.sync_num, r.sync_num) AS sync_num,
    r.summary,
    d.dispatch_line,
    r.result_line,
    coalesce(d.dispatches, 0) AS dispatches,
    coalesce(r.results, 0) AS results,
    -- The newest sync is the one dispatched last in file order (spec §3.1).
    coalesce(
        d.last_dispatch_line = max(d.last_dispatch_line) OVER (PARTITION BY snapshot_id), false
    ) AS newest,
    coalesce(r.failed_results, 0) AS failed_results
FROM dispatches d
FULL JOIN results r USING (snapshot_id, sync_id);

CREATE OR REPLACE VIEW sync_pairs AS FROM sync_pairs_of(NULL);
