-- Kaplan–Meier input for fork lifetimes (spec §7) of the forks in point_forks (a census
-- point's sessions, or one label's, over their history; point_forks.sql): one row per fork
-- and curve it belongs to, for km_curve / km_summary. grp is:
--   'overall'               every fork; event = it closed;
--   'close_kind:resolved'   cause-specific: event = it closed this way; a fork closed the
--   'close_kind:parked'     other way is `competing`, censored at that close;
--   'raised_by:{kind}'      by Raised by kind (user, twin, probe, harvest, other, unknown).
-- hours and syncs are the two durations (null: no lifetime, counted as unknown).
SELECT g.grp, l.hours, l.syncs, g.event, g.competing
FROM point_forks l
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
