-- Where a session last knew an element (a fork ID, a ledger entry) missing from the earlier
-- side of a step: the nearest earlier commits that know it, by ancestry (both sides of a
-- merge), else the last earlier census point at which the session knew it. A series file
-- includes it inside its WITH list (`-- include: last_known`), after defining
--   missing (pair_id, session_key, root, point, before_commit, element_id): per step, each
--     element its later side has and its earlier side lacks;
--   known (snapshot_id, element_id): the snapshots of those series that know each element;
-- and then reads last_known (pair_id, element_id, snapshot_id, seen).
commit_nodes as (
    select distinct o.session_key, o.root, o."commit", o.parents, o.snapshot_id
    from observations o
    semi join missing m on m.session_key = o.session_key and m.root = o.root
        and m.before_commit is not null
    where o."commit" is not null
),
ancestry as (
    -- Back from the earlier side's commit through the commits that changed the session (both
    -- sides of a merge), as far as the nearest that knows the element on each path.
    select m.pair_id, m.element_id, n.*
    from (select distinct pair_id, session_key, root, before_commit, element_id from missing) m
    join commit_nodes n
        on n.session_key = m.session_key and n.root = m.root and n."commit" = m.before_commit
    union
    select a.pair_id, a.element_id, n.*
    from ancestry a
    join commit_nodes n
        on n.session_key = a.session_key and n.root = a.root
        and list_contains(a.parents, n."commit")
    where not exists (
        select 1 from known k where k.snapshot_id = a.snapshot_id and k.element_id = a.element_id)
),
nearest as (
    select distinct a.pair_id, a.element_id, a.snapshot_id, seen_in(NULL, a."commit") as seen
    from ancestry a
    semi join known k on k.snapshot_id = a.snapshot_id and k.element_id = a.element_id
),
fallen as (
    -- Otherwise, the last earlier census point at which the session knew it.
    select m.pair_id, m.element_id, m.session_key, m.root, max(e.position) as position
    from (select distinct pair_id, session_key, root, point, element_id from missing) m
    join points now on now.point = m.point
    join standing_observations() o on o.session_key = m.session_key and o.root = m.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position < now.position
    semi join known k on k.snapshot_id = o.snapshot_id and k.element_id = m.element_id
    where (m.pair_id, m.element_id) not in (select (pair_id, element_id) from nearest)
    group by m.pair_id, m.element_id, m.session_key, m.root
),
point_nodes as materialized (
    -- That point's nodes of the series: its working tree and the commits first seen there.
    select f.pair_id, f.element_id, o.run_id, o."commit", o.parents, o.observed_at,
        o.location, o.snapshot_id,
        exists (
            select 1 from known k where k.snapshot_id = o.snapshot_id
                and k.element_id = f.element_id
        ) as knows
    from fallen f
    join standing_observations() o on o.session_key = f.session_key and o.root = f.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position = f.position
),
point_tree as (
    select pair_id, element_id,
        arg_max(parents, {observed: observed_at, research: location = 'research'}) as parents
    from point_nodes
    where "commit" is null
    group by pair_id, element_id
    union all
    -- No working tree there (its folder deleted before that night): the walk starts from the
    -- point's last commits by ancestry (none of its others descends from them), never from the
    -- latest dated, which a clock running ahead makes an ancestor.
    select n.pair_id, n.element_id, list(n."commit") as parents
    from point_nodes n
    where n."commit" is not null
        and (n.pair_id, n.element_id) not in (
            select (pair_id, element_id) from point_nodes where "commit" is null)
        and not exists (
            select 1 from point_nodes d
            where d.pair_id = n.pair_id and d.element_id = n.element_id
                and list_contains(d.parents, n."commit"))
    group by n.pair_id, n.element_id
),
in_point as (
    -- Back from that point's working tree through its commits (by ancestry, both sides of a
    -- merge), as far as the nearest that knows it on each path: a night's commits are ordered
    -- by ancestry, never by their dates, which a clock running ahead makes lie.
    select n.pair_id, n.element_id, n."commit", n.parents, n.snapshot_id, n.knows
    from point_tree t
    join point_nodes n
        on n.pair_id = t.pair_id and n.element_id = t.element_id
        and list_contains(t.parents, n."commit")
    union
    select n.pair_id, n.element_id, n."commit", n.parents, n.snapshot_id, n.knows
    from in_point a
    join point_nodes n
        on n.pair_id = a.pair_id and n.element_id = a.element_id
        and list_contains(a.parents, n."commit")
    where not a.knows
),
point_known as (
    -- The point's working tree where it knows it; else the nearest commits behind it (or behind
    -- its last commits, with no tree there) that do; else (none on their paths) its latest
    -- commit that does.
    select pair_id, element_id, 2 as class,
        arg_max(snapshot_id, {observed: observed_at, research: location = 'research'})
            as snapshot_id,
        arg_max(seen_in(run_id, NULL), {observed: observed_at, research: location = 'research'})
            as seen
    from point_nodes
    where "commit" is null and knows
    group by pair_id, element_id
    union all
    select distinct pair_id, element_id, 1, snapshot_id, seen_in(NULL, "commit")
    from in_point
    where knows
    union all
    select pair_id, element_id, 0, arg_max(snapshot_id, observed_at),
        arg_max(seen_in(NULL, "commit"), observed_at)
    from point_nodes
    where "commit" is not null and knows
    group by pair_id, element_id
),
last_known as (
    from nearest
    union all
    select pair_id, element_id, snapshot_id, seen
    from point_known
    qualify class = max(class) over (partition by pair_id, element_id)
),
