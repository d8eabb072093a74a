-- rule: BS-FORK-01
-- Along a session's history, a fork ID keeps the title it was raised with, and a fork that a
-- ledger entry resolved never comes back. An ID listed twice (itself a BS-FORK-01 failure in
-- each snapshot) is retitled only when a title appears under it that it never had before:
-- pairing each of its entries with each earlier one would call it retitled at every change.
-- An ID missing from the earlier side of a step keeps the titles it had where the session
-- last listed or resolved it: the nearest earlier commit doing either (by ancestry), else the
-- last such node of an earlier census point. Deleting a fork and giving its ID to a new
-- question later is a reuse too; so is listing again an ID whose resolution was since taken
-- out of the ledger (it 'reappears' after the entry that resolved it there).
with recursive gone as (
    select p.pair_id, p.session_key, p.root, p.point, p.before_commit, p.after_seen, a.fork_id,
        a.title, a.file, a.line
    from pairs p
    join forks a on a.snapshot_id = p.after_id
    where a.fork_id is not null and a.title is not null
        and not exists (
            select 1 from forks x where x.snapshot_id = p.before_id and x.fork_id = a.fork_id)
        and not exists (
            select 1 from ledger_resolves r
            where r.snapshot_id = p.before_id and r.fork_id = a.fork_id)
        -- A merge lists what its other side listed: the fork came in through that parent,
        -- whose own pair with the merge compares it (a branch forked before the fork was
        -- raised knew nothing of it, which is no reuse).
        and not exists (
            select 1
            from observations m
            join observations o on o.session_key = m.session_key and o.root = m.root
                and o."commit" is not null and list_contains(m.parents, o."commit")
                and o."commit" is distinct from p.before_commit
            join forks x on x.snapshot_id = o.snapshot_id and x.fork_id = a.fork_id
            where m.snapshot_id = p.after_id and m.session_key = p.session_key
                and m.root = p.root and m."commit" is not null and len(m.parents) > 1)
),
searched as (
    select o.snapshot_id from observations o
    semi join gone g on g.session_key = o.session_key and g.root = o.root
),
known as (
    -- Where a fork is known: listed in forks.md, or resolved by a ledger entry (the snapshots
    -- of the series that miss an ID only, so not every fork of the corpus is read).
    select snapshot_id, fork_id as element_id from forks
    where fork_id is not null and snapshot_id in (select snapshot_id from searched)
    union all
    select snapshot_id, fork_id from ledger_resolves
    where snapshot_id in (select snapshot_id from searched)
),
missing as (
    select pair_id, session_key, root, point, before_commit, fork_id as element_id from gone
),
-- include: last_known
-- What each fork of a step's later side is compared with: the earlier side, or, for an ID
-- missing there, the snapshot that last listed it (one that only resolved it has no titles:
-- that is the 'reappears' case).
compared as (
    select p.pair_id, a.fork_id, a.title, a.file, a.line, p.after_seen, p.before_id as earlier_id,
        p.before_seen as earlier_seen
    from pairs p
    join forks a on a.snapshot_id = p.after_id
    where a.fork_id is not null and a.title is not null
    union all
    select g.pair_id, g.fork_id, g.title, g.file, g.line, g.after_seen, l.snapshot_id, l.seen
    from gone g
    join last_known l on l.pair_id = g.pair_id and l.element_id = g.fork_id
),
titles as (
    -- The titles it had, each quoted in the message: 'one' or 'another'.
    select snapshot_id, fork_id, string_agg(distinct title, ''' or ''' order by title) as title,
        list(title) as titles
    from forks
    where fork_id is not null and title is not null
        and snapshot_id in (select earlier_id from compared)
    group by snapshot_id, fork_id
)
select c.pair_id, c.fork_id as element, 'retitled: ' || t.title || ' → ' || c.title as detail,
    c.file, c.line,
    c.fork_id || ' was retitled: ''' || t.title || ''' (' || c.earlier_seen || ') became '''
        || c.title || ''' (' || c.after_seen || '); a new question takes a new ID' as message
from compared c
join titles t on t.snapshot_id = c.earlier_id and t.fork_id = c.fork_id
-- As shown: a doubled space is no retitle.
where not list_contains([as_shown(x) for x in t.titles], as_shown(c.title))
union all
select p.pair_id, a.fork_id, 'reappears', a.file, a.line,
    a.fork_id || ' reappears after ' || coalesce(min(r.decision_id), 'an entry with no D#')
        || ' resolved it (' || p.before_seen
        || '); fork IDs are never reused'
from pairs p
join ledger_resolves r on r.snapshot_id = p.before_id
join forks a on a.snapshot_id = p.after_id and a.fork_id = r.fork_id
where not exists (
    select 1 from forks x where x.snapshot_id = p.before_id and x.fork_id = a.fork_id
)
group by p.pair_id, a.fork_id, a.file, a.line, p.before_seen
union all
-- Missing from the earlier side, and where the session last knew it, resolved, not listed.
select g.pair_id, g.fork_id, 'reappears', g.file, g.line,
    g.fork_id || ' reappears after ' || coalesce(min(r.decision_id), 'an entry with no D#')
        || ' resolved it (' || min(l.seen) || '); fork IDs are never reused'
from gone g
join last_known l on l.pair_id = g.pair_id and l.element_id = g.fork_id
join ledger_resolves r on r.snapshot_id = l.snapshot_id and r.fork_id = g.fork_id
where not exists (
    select 1 from forks x where x.snapshot_id = l.snapshot_id and x.fork_id = g.fork_id)
group by g.pair_id, g.fork_id, g.file, g.line
