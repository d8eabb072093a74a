-- Kaplan–Meier input for fork lifetimes (spec §7) of the sessions that the $population runs
-- saw (the chosen census point's, or one label's), over their history in the given runs
-- ($runs: the runs of that point and every earlier one, or of one label): one row per fork
-- and curve it belongs to, for km_curve / km_summary. grp is:
--   'overall'               every fork; event = it closed;
--   'close_kind:resolved'   cause-specific: event = it closed this way; a fork closed the
--   'close_kind:parked'     other way is `competing`, censored at that close;
--   'raised_by:{kind}'      by Raised by kind (user, twin, probe, harvest, other, unknown).
-- hours and syncs are the two durations (null: no lifetime, counted as unknown).
-- Each fork gives its four rows from one read (unnest), so the lifetimes are never held twice.
SELECT g.grp, l.hours, l.syncs, g.event, g.competing
FROM fork_lifetimes_for($runs) l
SEMI JOIN (
    SELECT DISTINCT session_key, root
    FROM observations
    WHERE list_contains($population, run_id) AND "commit" IS NULL
) p USING (session_key, root)
CROSS JOIN LATERAL (
    SELECT unnest([
        {'grp': 'overall', 'event': l.close_kind IS NOT NULL, 'competing': false},
        {'grp': 'close_kind:resolved', 'event': coalesce(l.close_kind = 'resolved', false),
            'competing': coalesce(l.close_kind <> 'resolved', false)},
        {'grp': 'close_kind:parked', 'event': coalesce(l.close_kind = 'parked', false),
            'competing': coalesce(l.close_kind <> 'parked', false)},
        {'grp': 'raised_by:' || coalesce(l.raised_by, 'unknown'),
            'event': l.close_kind IS NOT NULL, 'competing': false}
    ], recursive := true)
) g;
