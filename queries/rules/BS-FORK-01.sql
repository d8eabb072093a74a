-- rule: BS-FORK-01
-- gate: session
-- description: Fork IDs are unique; every fork has the marker [open] or [parked → destination] and a non-empty `Closes when:`; across snapshots an ID is never retitled or brought back after it was resolved.
with numbered as (
    select *,
        row_number() over (partition by snapshot_id, fork_id order by line) as nth,
        min(line) over (partition by snapshot_id, fork_id) as first_line
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
select snapshot_id, file, line, fork_id || ' is parked with no destination; write [parked → where]'
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
union all
-- Across snapshots: a fork ID keeps the title it was raised with.
select later.snapshot_id, later.file, later.line,
    later.fork_id || ' was retitled: ''' || first.title || ''' (' || first.seen_in || ') became '''
        || later.title || ''' (' || later.seen_in || '); a new question takes a new ID'
from (
    select q.session_key, q.root, q.step, q.seen_in, f.*
    from snapshot_sequence q join forks f using (snapshot_id)
    where f.fork_id is not null and f.title is not null
) later
join (
    select q.session_key, q.root, q.seen_in, f.fork_id, f.title
    from snapshot_sequence q join forks f using (snapshot_id)
    where f.fork_id is not null and f.title is not null
    qualify row_number() over (partition by q.session_key, q.root, f.fork_id order by q.step) = 1
) first on first.session_key = later.session_key and first.root = later.root
    and first.fork_id = later.fork_id
where later.title <> first.title
union all
-- Across snapshots: a resolved fork's ID never comes back.
select q.snapshot_id, f.file, f.line,
    f.fork_id || ' reappears after ' || r.decision_id || ' resolved it (' || earlier.seen_in || ')'
from snapshot_sequence q
join forks f using (snapshot_id)
join snapshot_sequence earlier
    on earlier.session_key = q.session_key and earlier.root = q.root and earlier.step < q.step
join ledger_resolves r on r.snapshot_id = earlier.snapshot_id and r.fork_id = f.fork_id
qualify row_number() over (
    partition by q.session_key, q.root, q.snapshot_id, f.line order by earlier.step
) = 1
