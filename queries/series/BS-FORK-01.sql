-- rule: BS-FORK-01
-- Along a session's history, a fork ID keeps the title it was raised with, and a fork that a
-- ledger entry resolved never comes back.
select p.pair_id, a.fork_id as element, 'retitled: ' || b.title || ' → ' || a.title as detail,
    a.file, a.line,
    a.fork_id || ' was retitled: ''' || b.title || ''' (' || p.before_seen || ') became '''
        || a.title || ''' (' || p.after_seen || '); a new question takes a new ID' as message
from pairs p
join forks b on b.snapshot_id = p.before_id
join forks a on a.snapshot_id = p.after_id and a.fork_id = b.fork_id
where b.fork_id is not null and a.title is not null and b.title is not null
    and a.title <> b.title
union all
select p.pair_id, a.fork_id, 'reappears', a.file, a.line,
    a.fork_id || ' reappears after ' || min(r.decision_id) || ' resolved it (' || p.before_seen
        || '); fork IDs are never reused'
from pairs p
join ledger_resolves r on r.snapshot_id = p.before_id
join forks a on a.snapshot_id = p.after_id and a.fork_id = r.fork_id
where not exists (
    select 1 from forks x where x.snapshot_id = p.before_id and x.fork_id = a.fork_id
)
group by p.pair_id, a.fork_id, a.file, a.line, p.before_seen
