-- rule: BS-LEDGER-01
-- Along a session's history the ledger is append-only: an entry never disappears and its
-- Decision, Why and How to apply never change (amend or reverse with a new entry instead).
-- An entry is kept when the later snapshot has an entry of its ID with the same Decision, Why
-- and How to apply: an ID listed twice is matched entry by entry, never each with each. An
-- entry whose ID the earlier side lacks is compared with the entries of that ID where the
-- session last had it (the nearest earlier commit by ancestry, else the last node of an
-- earlier census point): removed, then brought back with other text, is a rewrite too.
with recursive paired as materialized (
    -- The entries of the pairs' snapshots only, as shown (a reversal note left out: an
    -- annotation, not a rewrite), so the notes are stripped from these and not every entry.
    select snapshot_id, decision_id, line, decision, why, how_to_apply,
        without_reversal(decision) as decision_shown, without_reversal(why) as why_shown,
        without_reversal(how_to_apply) as how_shown
    from ledger
    where decision_id is not null
        and snapshot_id in (select before_id from pairs union select after_id from pairs)
),
lost as (
    select p.pair_id, p.after_id, p.before_seen, p.after_seen, b.decision_id, b.decision, b.why,
        b.how_to_apply, b.decision_shown, b.why_shown, b.how_shown
    from pairs p
    join paired b on b.snapshot_id = p.before_id
    where not exists (
        select 1 from paired k
        where k.snapshot_id = p.after_id and k.decision_id = b.decision_id
            and k.decision_shown is not distinct from b.decision_shown
            and k.why_shown is not distinct from b.why_shown
            and k.how_shown is not distinct from b.how_shown
    )
),
back as (
    select p.pair_id, p.session_key, p.root, p.point, p.before_commit, p.after_seen, a.line,
        a.decision_id, a.decision_shown, a.why_shown, a.how_shown
    from pairs p
    join paired a on a.snapshot_id = p.after_id
    where not exists (
        select 1 from paired b where b.snapshot_id = p.before_id and b.decision_id = a.decision_id)
),
commit_nodes as (
    select distinct o.session_key, o.root, o."commit", o.parents, o.snapshot_id
    from observations o
    semi join back h on h.session_key = o.session_key and h.root = o.root
    where o."commit" is not null
),
ancestry as (
    -- Back from the earlier side's commit through the commits that changed the session (both
    -- sides of a merge), as far as the nearest that has the ID on each path.
    select h.pair_id, h.decision_id, n.*
    from (select distinct pair_id, session_key, root, before_commit, decision_id from back) h
    join commit_nodes n
        on n.session_key = h.session_key and n.root = h.root and n."commit" = h.before_commit
    union
    select a.pair_id, a.decision_id, n.*
    from ancestry a
    join commit_nodes n
        on n.session_key = a.session_key and n.root = a.root
        and list_contains(a.parents, n."commit")
    where not exists (
        select 1 from ledger x where x.snapshot_id = a.snapshot_id and x.decision_id = a.decision_id)
),
nearest as (
    select distinct a.pair_id, a.decision_id, a.snapshot_id, seen_in(NULL, a."commit") as seen
    from ancestry a
    semi join ledger x on x.snapshot_id = a.snapshot_id and x.decision_id = a.decision_id
),
fallen as (
    -- Otherwise, the last earlier census point at which the session knew it.
    select g.pair_id, g.decision_id, g.session_key, g.root, max(e.position) as position
    from (select distinct pair_id, session_key, root, point, decision_id from back) g
    join points now on now.point = g.point
    join observations o on o.session_key = g.session_key and o.root = g.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position < now.position
    semi join ledger x on x.snapshot_id = o.snapshot_id and x.decision_id = g.decision_id
    where (g.pair_id, g.decision_id) not in (select (pair_id, decision_id) from nearest)
    group by g.pair_id, g.decision_id, g.session_key, g.root
),
point_nodes as materialized (
    -- That point's nodes of the series: its working tree and the commits first seen there.
    select f.pair_id, f.decision_id, o.run_id, o."commit", o.parents, o.observed_at, o.location,
        o.snapshot_id, exists (select 1 from ledger x where x.snapshot_id = o.snapshot_id and x.decision_id = f.decision_id) as knows
    from fallen f
    join observations o on o.session_key = f.session_key and o.root = f.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position = f.position
),
point_tree as (
    select pair_id, decision_id,
        arg_max(parents, {observed: observed_at, research: location = 'research'}) as parents
    from point_nodes
    where "commit" is null
    group by pair_id, decision_id
),
in_point as (
    -- Back from that point's working tree through its commits (by ancestry, both sides of a
    -- merge), as far as the nearest that knows it on each path: a night's commits are ordered
    -- by ancestry, never by their dates, which a clock running ahead makes lie.
    select n.pair_id, n.decision_id, n."commit", n.parents, n.snapshot_id, n.knows
    from point_tree t
    join point_nodes n
        on n.pair_id = t.pair_id and n.decision_id = t.decision_id and list_contains(t.parents, n."commit")
    union
    select n.pair_id, n.decision_id, n."commit", n.parents, n.snapshot_id, n.knows
    from in_point a
    join point_nodes n
        on n.pair_id = a.pair_id and n.decision_id = a.decision_id and list_contains(a.parents, n."commit")
    where not a.knows
),
point_known as (
    -- The point's working tree where it knows it; else the nearest commits behind it that do;
    -- else (no tree there, or none on its paths) its latest commit that does.
    select pair_id, decision_id, 2 as class,
        arg_max(snapshot_id, {observed: observed_at, research: location = 'research'})
            as snapshot_id,
        arg_max(seen_in(run_id, NULL), {observed: observed_at, research: location = 'research'})
            as seen
    from point_nodes
    where "commit" is null and knows
    group by pair_id, decision_id
    union all
    select distinct pair_id, decision_id, 1, snapshot_id, seen_in(NULL, "commit")
    from in_point
    where knows
    union all
    select pair_id, decision_id, 0, arg_max(snapshot_id, observed_at),
        arg_max(seen_in(NULL, "commit"), observed_at)
    from point_nodes
    where "commit" is not null and knows
    group by pair_id, decision_id
),
last_had as (
    from nearest
    union all
    select pair_id, decision_id, snapshot_id, seen
    from point_known
    qualify class = max(class) over (partition by pair_id, decision_id)
),
had as (
    select l.pair_id, l.seen, x.decision_id, without_reversal(x.decision) as decision_shown,
        without_reversal(x.why) as why_shown, without_reversal(x.how_to_apply) as how_shown
    from last_had l
    join ledger x on x.snapshot_id = l.snapshot_id and x.decision_id = l.decision_id
)
select b.pair_id, b.decision_id as element, 'rewritten' as detail, 'ledger.md' as file, b.line,
    b.decision_id || ' was rewritten between ' || h.seen || ' and ' || b.after_seen || ' ('
        || concat_ws(', ',
            case when b.decision_shown is distinct from h.decision_shown then 'Decision' end,
            case when b.why_shown is distinct from h.why_shown then 'Why' end,
            case when b.how_shown is distinct from h.how_shown then 'How to apply' end)
        || ' changed; it was removed in between); amend with a new entry instead' as message
from back b
join had h on h.pair_id = b.pair_id and h.decision_id = b.decision_id
where not exists (
    select 1 from had k
    where k.pair_id = b.pair_id and k.decision_id = b.decision_id
        and k.decision_shown is not distinct from b.decision_shown
        and k.why_shown is not distinct from b.why_shown
        and k.how_shown is not distinct from b.how_shown
)
-- The entry it had there that differs in the fewest fields names what changed.
qualify row_number() over (
    partition by b.pair_id, b.decision_id, b.line
    order by (b.decision_shown is distinct from h.decision_shown)::int
        + (b.why_shown is distinct from h.why_shown)::int
        + (b.how_shown is distinct from h.how_shown)::int, h.seen
) = 1
union all
select l.pair_id, l.decision_id as element,
    case when a.decision_id is null then 'removed' else 'rewritten' end as detail,
    'ledger.md' as file, a.line,
    l.decision_id || case
        when a.decision_id is null then ' was removed (present in ' || l.before_seen
            || ', gone in ' || l.after_seen || '); reverse it with a new entry instead'
        else ' was rewritten between ' || l.before_seen || ' and ' || l.after_seen || ' ('
            || concat_ws(', ',
                case when a.decision_shown is distinct from l.decision_shown then 'Decision' end,
                case when a.why_shown is distinct from l.why_shown then 'Why' end,
                case when a.how_shown is distinct from l.how_shown then 'How to apply' end)
            || ' changed); amend with a new entry instead'
    end as message
from lost l
left join paired a on a.snapshot_id = l.after_id and a.decision_id = l.decision_id
-- The message compares with the entry of that ID now that differs in the fewest fields.
qualify row_number() over (
    partition by l.pair_id, l.decision_id, l.decision, l.why, l.how_to_apply
    order by (a.decision_shown is distinct from l.decision_shown)::int
        + (a.why_shown is distinct from l.why_shown)::int
        + (a.how_shown is distinct from l.how_shown)::int, a.line
) = 1
