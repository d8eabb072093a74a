-- rule: BS-FORK-01
-- Along a session's history, a fork ID keeps the title it was raised with, and a fork that a
-- ledger entry resolved never comes back. An ID listed twice (itself a BS-FORK-01 failure in
-- each snapshot) is retitled only when a title appears under it that it never had before:
-- pairing each of its entries with each earlier one would call it retitled at every change.
select p.pair_id, a.fork_id as element, 'retitled: ' || b.title || ' → ' || a.title as detail,
    a.file, a.line,
    a.fork_id || ' was retitled: ''' || b.title || ''' (' || p.before_seen || ') became '''
        || a.title || ''' (' || p.after_seen || '); a new question takes a new ID' as message
from pairs p
join (
    -- The titles it had, each quoted in the message: 'one' or 'another'.
    select snapshot_id, fork_id, string_agg(distinct title, ''' or ''' order by title) as title,
        list(title) as titles
    from forks
    where fork_id is not null and title is not null
        and snapshot_id in (select before_id from pairs)
    group by snapshot_id, fork_id
) b on b.snapshot_id = p.before_id
join forks a on a.snapshot_id = p.after_id and a.fork_id = b.fork_id
where a.title is not null and not list_contains(b.titles, a.title)
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
