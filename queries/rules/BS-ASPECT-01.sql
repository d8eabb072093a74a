-- rule: BS-ASPECT-01
-- gate: session
-- description: Every aspect has refs and every ref resolves (F# to a fork or a resolved fork, D# to a ledger entry, fragment:x to fragments/, thesis to thesis.md); `none yet` is noted as info.
-- reads: state.md, thesis.md, forks.md, ledger.md, fragments/
with known_forks as (
    select snapshot_id, fork_id from forks where fork_id is not null
    union
    select snapshot_id, fork_id from ledger_resolves
)
select r.snapshot_id, r.file, r.line,
    'aspect ''' || r.aspect || ''' cites ' || r.ref || ', ' || case r.kind
        when 'fork' then 'which is neither a fork in forks.md nor resolved in the ledger'
        when 'decision' then 'which is not a ledger entry'
        when 'fragment' then 'but fragments/ has no such file'
        when 'thesis' then 'but thesis.md is missing'
        else 'which is not F#, D#, thesis, fragment:{name} or none yet'
    end as message,
    'fail' as severity
from aspect_refs r
join snapshots s using (snapshot_id)
where (r.kind = 'fork' and not exists (
        select 1 from known_forks k where k.snapshot_id = r.snapshot_id and k.fork_id = r.target))
    or (r.kind = 'decision' and not exists (
        select 1 from ledger l where l.snapshot_id = r.snapshot_id and l.decision_id = r.target))
    -- fragment:api and fragment:api.md name the same fragment (spec §3.1).
    or (r.kind = 'fragment' and not exists (
        select 1 from fragments f where f.snapshot_id = r.snapshot_id
            and (f.name = r.target or f.file = 'fragments/' || r.target)))
    or (r.kind = 'thesis' and not s.thesis_exists)
    or r.kind = 'unknown'
union all
select snapshot_id, file, line,
    'aspect ''' || name || ''' has no refs; add → F#, D#, thesis, fragment:{name} or none yet',
    'fail'
from aspects
where ref_count = 0
union all
select snapshot_id, file, line,
    'aspect ''' || aspect || ''' is none yet: an open coverage gap',
    'info'
from aspect_refs
where kind = 'none_yet'
