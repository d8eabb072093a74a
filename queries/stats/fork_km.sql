-- Kaplan–Meier input rows for fork lifetimes (spec §7) over the chosen runs (? = run ids,
-- VARCHAR[]; fork_lifetimes_for recomputes lifetimes from those runs' observations alone).
-- One row per fork and group it belongs to:
--   dimension 'overall'    group 'all': every fork; event = it closed.
--   dimension 'close_kind' group 'resolved' / 'parked': every fork, cause-specific: event = it
--                          closed this way; a fork closed the other way is `competing` and
--                          censored at its close; open forks are censored as everywhere.
--   dimension 'raised_by'  group = Raised by kind (user, twin, probe, harvest, other, unknown).
-- hours / syncs are the durations (null: no lifetime, counted as unknown, not estimated).
WITH lt AS (
    SELECT * FROM fork_lifetimes_for(?::VARCHAR[])
)
SELECT 'overall' AS dimension, 'all' AS grp, session_key, fork_id, hours, syncs,
    close_kind IS NOT NULL AS event, false AS competing
FROM lt
UNION ALL
SELECT 'close_kind', k.kind, session_key, fork_id, hours, syncs,
    coalesce(close_kind = k.kind, false), coalesce(close_kind <> k.kind, false)
FROM lt
CROSS JOIN (VALUES ('resolved'), ('parked')) AS k(kind)
UNION ALL
SELECT 'raised_by', coalesce(raised_by, 'unknown'), session_key, fork_id, hours, syncs,
    close_kind IS NOT NULL, false
FROM lt
ORDER BY dimension, grp, session_key, fork_id;
