-- Kaplan–Meier input for fork lifetimes (spec §7) of the sessions that the $population runs
-- saw (the chosen census point's, or one label's), over their history in the given runs
-- ($runs: the runs of that point and every earlier one, or of one label): one row per fork
-- and curve it belongs to, for km_curve / km_summary. grp is:
--   'overall'               every fork; event = it closed;
--   'close_kind:resolved'   cause-specific: event = it closed this way; a fork closed the
--   'close_kind:parked'     other way is `competing`, censored at that close;
--   'raised_by:{kind}'      by Raised by kind (user, twin, probe, harvest, other, unknown).
-- hours and syncs are the two durations (null: no lifetime, counted as unknown).
WITH lt AS (
    SELECT l.*
    FROM fork_lifetimes_for($runs) l
    SEMI JOIN (
        SELECT DISTINCT session_key, root
        FROM observations
        WHERE list_contains($population, run_id) AND "commit" IS NULL
    ) p USING (session_key, root)
)
SELECT 'overall' AS grp, hours, syncs, close_kind IS NOT NULL AS event, false AS competing
FROM lt
UNION ALL
SELECT 'close_kind:' || k.kind, hours, syncs, coalesce(close_kind = k.kind, false),
    coalesce(close_kind <> k.kind, false)
FROM lt
CROSS JOIN (VALUES ('resolved'), ('parked')) AS k(kind)
UNION ALL
SELECT 'raised_by:' || coalesce(raised_by, 'unknown'), hours, syncs, close_kind IS NOT NULL, false
FROM lt;
