-- rule: BS-FORK-01
-- gate: session
-- description: Fork IDs are unique; every fork has the marker [open] or [parked → destination] and a non-empty `Closes when:`; across snapshots an ID is never retitled or brought back after it was resolved.
-- reads: forks.md
with numbered as (
    -- An ID is its number, as ledger IDs are (BS-LEDGER-01): F01 is F1 used again.
    select *,
        row_number() over (partition by snapshot_id, coalesce(fork_num::varchar, fork_id)
            order by line) as nth,
        min(line) over (partition by snapshot_id, coalesce(fork_num::varchar, fork_id))
            as first_line
    from forks
)
select snapshot_id, file, line,
    fork_id || ' is used again (first at line ' || first_line || '); fork IDs are never reused' as message
from numbered
where fork_id is not null and nth > 1
union all
select snapshot_id, file, line, 'fork heading has no F# ID (expected ## F# — title [marker])'
from forks
where fork_id is null
union all
select snapshot_id, file, line,
    coalesce(fork_id, 'fork') || case
        when marker_raw is null then ' has no [marker]; expected [open] or [parked → destination]'
        else ' has marker [' || marker_raw || ']; expected [open] or [parked → destination]'
    end
from forks
where marker is null
union all
select snapshot_id, file, line,
    coalesce(fork_id, 'fork') || case
        when destination is null then ' is parked, but its destination is not written after an arrow (['
            || marker_raw || ']); write [parked → where]'
        else ' is parked with no destination; write [parked → where]'
    end
from forks
where marker = 'parked' and coalesce(destination, '') = ''
union all
select snapshot_id, file, coalesce(closes_when_line, line),
    coalesce(fork_id, 'fork') || case
        when closes_when is null then ' has no ''Closes when:'''
        else ' has an empty ''Closes when:'''
    end
from forks
where coalesce(closes_when, '') = ''
