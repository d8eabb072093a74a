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
searched as (
    select o.snapshot_id from observations o
    semi join back b on b.session_key = o.session_key and b.root = o.root
),
known as (
    select snapshot_id, decision_id as element_id from ledger
    where decision_id is not null and snapshot_id in (select snapshot_id from searched)
),
missing as (
    select pair_id, session_key, root, point, before_commit, decision_id as element_id
    from back
),
-- include: last_known
had as (
    select l.pair_id, l.seen, x.decision_id, without_reversal(x.decision) as decision_shown,
        without_reversal(x.why) as why_shown, without_reversal(x.how_to_apply) as how_shown
    from last_known l
    join ledger x on x.snapshot_id = l.snapshot_id and x.decision_id = l.element_id
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
