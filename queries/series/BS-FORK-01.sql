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
    select p.pair_id, p.session_key, p.root, p.point, p.after_seen, a.fork_id, a.title,
        a.file, a.line
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
    select snapshot_id, fork_id from forks
    where fork_id is not null and snapshot_id in (select snapshot_id from searched)
    union all
    select snapshot_id, fork_id from ledger_resolves
    where snapshot_id in (select snapshot_id from searched)
),
hidden as (
    select distinct g.pair_id, g.session_key, g.root, g.fork_id, p.before_commit
    from gone g
    join pairs p using (pair_id)
    where p.before_commit is not null
),
commit_nodes as (
    select distinct o.session_key, o.root, o."commit", o.parents, o.snapshot_id
    from observations o
    semi join hidden h on h.session_key = o.session_key and h.root = o.root
    where o."commit" is not null
),
ancestry as (
    -- Back from the earlier side's commit through the commits that changed the session (both
    -- sides of a merge), as far as the nearest that lists the ID on each path.
    select h.pair_id, h.fork_id, n.*
    from hidden h
    join commit_nodes n
        on n.session_key = h.session_key and n.root = h.root and n."commit" = h.before_commit
    union
    select a.pair_id, a.fork_id, n.*
    from ancestry a
    join commit_nodes n
        on n.session_key = a.session_key and n.root = a.root
        and list_contains(a.parents, n."commit")
    where not exists (
        select 1 from known k where k.snapshot_id = a.snapshot_id and k.fork_id = a.fork_id)
),
nearest as (
    select distinct a.pair_id, a.fork_id, a.snapshot_id, seen_in(NULL, a."commit") as seen
    from ancestry a
    semi join known k on k.snapshot_id = a.snapshot_id and k.fork_id = a.fork_id
),
fallen as (
    -- Otherwise, the last earlier census point at which the session knew it.
    select g.pair_id, g.fork_id, g.session_key, g.root, max(e.position) as position
    from (select distinct pair_id, session_key, root, point, fork_id from gone) g
    join points now on now.point = g.point
    join observations o on o.session_key = g.session_key and o.root = g.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position < now.position
    semi join known k on k.snapshot_id = o.snapshot_id and k.fork_id = g.fork_id
    where (g.pair_id, g.fork_id) not in (select (pair_id, fork_id) from nearest)
    group by g.pair_id, g.fork_id, g.session_key, g.root
),
point_nodes as materialized (
    -- That point's nodes of the series: its working tree and the commits first seen there.
    select f.pair_id, f.fork_id, o.run_id, o."commit", o.parents, o.observed_at, o.location,
        o.snapshot_id, exists (select 1 from known k where k.snapshot_id = o.snapshot_id and k.fork_id = f.fork_id) as knows
    from fallen f
    join observations o on o.session_key = f.session_key and o.root = f.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position = f.position
),
point_tree as (
    select pair_id, fork_id,
        arg_max(parents, {observed: observed_at, research: location = 'research'}) as parents
    from point_nodes
    where "commit" is null
    group by pair_id, fork_id
),
in_point as (
    -- Back from that point's working tree through its commits (by ancestry, both sides of a
    -- merge), as far as the nearest that knows it on each path: a night's commits are ordered
    -- by ancestry, never by their dates, which a clock running ahead makes lie.
    select n.pair_id, n.fork_id, n."commit", n.parents, n.snapshot_id, n.knows
    from point_tree t
    join point_nodes n
        on n.pair_id = t.pair_id and n.fork_id = t.fork_id and list_contains(t.parents, n."commit")
    union
    select n.pair_id, n.fork_id, n."commit", n.parents, n.snapshot_id, n.knows
    from in_point a
    join point_nodes n
        on n.pair_id = a.pair_id and n.fork_id = a.fork_id and list_contains(a.parents, n."commit")
    where not a.knows
),
point_known as (
    -- The point's working tree where it knows it; else the nearest commits behind it that do;
    -- else (no tree there, or none on its paths) its latest commit that does.
    select pair_id, fork_id, 2 as class,
        arg_max(snapshot_id, {observed: observed_at, research: location = 'research'})
            as snapshot_id,
        arg_max(seen_in(run_id, NULL), {observed: observed_at, research: location = 'research'})
            as seen
    from point_nodes
    where "commit" is null and knows
    group by pair_id, fork_id
    union all
    select distinct pair_id, fork_id, 1, snapshot_id, seen_in(NULL, "commit")
    from in_point
    where knows
    union all
    select pair_id, fork_id, 0, arg_max(snapshot_id, observed_at),
        arg_max(seen_in(NULL, "commit"), observed_at)
    from point_nodes
    where "commit" is not null and knows
    group by pair_id, fork_id
),
last_listed as (
    from nearest
    union all
    select pair_id, fork_id, snapshot_id, seen
    from point_known
    qualify class = max(class) over (partition by pair_id, fork_id)
),
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
    join last_listed l on l.pair_id = g.pair_id and l.fork_id = g.fork_id
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
join last_listed l on l.pair_id = g.pair_id and l.fork_id = g.fork_id
join ledger_resolves r on r.snapshot_id = l.snapshot_id and r.fork_id = g.fork_id
where not exists (
    select 1 from forks x where x.snapshot_id = l.snapshot_id and x.fork_id = g.fork_id)
group by g.pair_id, g.fork_id, g.file, g.line
