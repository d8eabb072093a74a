-- rule: BS-STATE-01
-- Along a session's history, Status only moves forward (open → stopping → harvested); a step
-- back fails the later snapshot.
with recursive hidden as (
    -- Pairs whose earlier side is a commit that shows no Status to rank (state.md missing, or
    -- a value that is none of the three).
    select p.pair_id, p.session_key, p.root, p.before_commit
    from pairs p
    join snapshots b on b.snapshot_id = p.before_id
    where p.before_commit is not null and state_rank(b.status) is null
),
commit_nodes as (
    select distinct o.session_key, o.root, o."commit", o.parents, s.status
    from observations o
    semi join hidden h on h.session_key = o.session_key and h.root = o.root
    join snapshots s on s.snapshot_id = o.snapshot_id
    where o."commit" is not null
),
ancestry as (
    -- Back from such a commit through the commits that changed the session (by ancestry, both
    -- sides of a merge), as far as the nearest that shows a Status on each path.
    select h.pair_id, n.*
    from hidden h
    join commit_nodes n
        on n.session_key = h.session_key and n.root = h.root and n."commit" = h.before_commit
    union
    select a.pair_id, n.*
    from ancestry a
    join commit_nodes n
        on n.session_key = a.session_key and n.root = a.root
        and list_contains(a.parents, n."commit")
    where state_rank(a.status) is null
),
nearest as (
    -- The furthest along of those Statuses (a merge may join two): a step back from any is one.
    select pair_id, arg_max(status, state_rank(status)) as status,
        arg_max(seen_in(NULL, "commit"), state_rank(status)) as seen
    from ancestry
    where state_rank(status) is not null
    group by pair_id
),
fallen as (
    -- Otherwise (no such commit, or the earlier side is a working tree), the last earlier
    -- census point at which the session showed a Status.
    select u.pair_id, u.session_key, u.root, max(e.position) as position
    from pairs u
    join snapshots b on b.snapshot_id = u.before_id and state_rank(b.status) is null
    join points now on now.point = u.point
    join standing_observations() o on o.session_key = u.session_key and o.root = u.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position < now.position
    join snapshots s on s.snapshot_id = o.snapshot_id and state_rank(s.status) is not null
    where u.pair_id not in (select pair_id from nearest)
    group by u.pair_id, u.session_key, u.root
),
point_nodes as materialized (
    -- That point's nodes of the series: its working tree and the commits first seen there.
    select f.pair_id, o.run_id, o."commit", o.parents, o.observed_at, o.location, s.status
    from fallen f
    join standing_observations() o on o.session_key = f.session_key and o.root = f.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position = f.position
    join snapshots s on s.snapshot_id = o.snapshot_id
),
point_tree as (
    select pair_id, arg_max(parents, {observed: observed_at, research: location = 'research'})
        as parents
    from point_nodes
    where "commit" is null
    group by pair_id
    union all
    -- No working tree there (its folder deleted before that night): the walk starts from the
    -- point's last commits by ancestry (none of its others descends from them), never from the
    -- latest dated, which a clock running ahead makes an ancestor's `open`.
    select n.pair_id, list(n."commit") as parents
    from point_nodes n
    where n."commit" is not null
        and n.pair_id not in (select pair_id from point_nodes where "commit" is null)
        and not exists (
            select 1 from point_nodes d
            where d.pair_id = n.pair_id and list_contains(d.parents, n."commit"))
    group by n.pair_id
),
in_point as (
    -- Back from that point's working tree through its commits (by ancestry, both sides of a
    -- merge), as far as the nearest that shows a Status on each path: a night's commits are
    -- ordered by ancestry, never by their dates, which a clock running ahead makes lie (an
    -- old branch's `open`, merged that night, was taken for the tree's `stopping`).
    select n.pair_id, n."commit", n.parents, n.status
    from point_tree t
    join point_nodes n on n.pair_id = t.pair_id and list_contains(t.parents, n."commit")
    union
    select n.pair_id, n."commit", n.parents, n.status
    from in_point a
    join point_nodes n on n.pair_id = a.pair_id and list_contains(a.parents, n."commit")
    where state_rank(a.status) is null
),
earlier_point as (
    -- The point's working tree where it shows a Status; else the furthest along of the nearest
    -- commits behind it (or behind its last commits, with no tree there) that do; else (none
    -- on their paths) its latest commit.
    select pair_id, arg_max(status, order_by) as status, arg_max(seen, order_by) as seen
    from (
        select pair_id, status, seen_in(run_id, "commit") as seen,
            {class: 2, key: epoch(observed_at), research: location = 'research'} as order_by
        from point_nodes
        where "commit" is null and state_rank(status) is not null
        union all
        select pair_id, status, seen_in(NULL, "commit"),
            {class: 1, key: state_rank(status), research: false}
        from in_point
        where state_rank(status) is not null
        union all
        select pair_id, status, seen_in(NULL, "commit"),
            {class: 0, key: epoch(observed_at), research: false}
        from point_nodes
        where "commit" is not null and state_rank(status) is not null
    )
    group by pair_id
),
known as (
    -- What each pair's later side is measured from: its earlier side's Status where it shows
    -- one, else the last shown before it (a snapshot that could not be read hides no step back).
    select p.pair_id, b.status, p.before_seen as seen
    from pairs p
    join snapshots b on b.snapshot_id = p.before_id
    where state_rank(b.status) is not null
    union all
    from nearest
    union all
    from earlier_point
)
select p.pair_id, 'Status' as element, k.status || ' → ' || a.status as detail,
    'state.md' as file, a.status_line as line,
    'Status moved backward from ' || k.status || ' (' || k.seen || ') to ' || a.status
        || ' (' || p.after_seen || ')' as message
from pairs p
join known k using (pair_id)
join snapshots a on a.snapshot_id = p.after_id
where state_rank(a.status) < state_rank(k.status)
