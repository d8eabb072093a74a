-- rule: BS-FORK-02
-- gate: session
-- description: No fork entry in forks.md, open or parked, has an ID that a ledger entry resolves (a resolved fork's entry is deleted).
-- reads: forks.md, ledger.md
select f.snapshot_id, f.file, f.line,
    f.fork_id || ' is still listed' || coalesce(' [' || f.marker || ']', '') || ' but '
        || string_agg(distinct coalesce(r.decision_id, 'an entry with no D#'), ', '
            order by coalesce(r.decision_id, 'an entry with no D#'))
        || ' resolves it; delete the entry' as message
from forks f
join ledger_resolves r on r.snapshot_id = f.snapshot_id and r.fork_id = f.fork_id
group by f.snapshot_id, f.file, f.line, f.fork_id, f.marker
