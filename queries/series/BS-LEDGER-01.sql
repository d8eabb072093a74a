-- rule: BS-LEDGER-01
-- Along a session's history the ledger is append-only: an entry never disappears and its
-- Decision, Why and How to apply never change (amend or reverse with a new entry instead).
-- An entry is kept when the later snapshot has an entry of its ID with the same Decision, Why
-- and How to apply: an ID listed twice is matched entry by entry, never each with each.
with lost as (
    select p.pair_id, p.after_id, p.before_seen, p.after_seen, b.decision_id, b.decision, b.why,
        b.how_to_apply
    from pairs p
    join ledger b on b.snapshot_id = p.before_id and b.decision_id is not null
    where not exists (
        select 1 from ledger k
        where k.snapshot_id = p.after_id and k.decision_id = b.decision_id
            -- As shown, a reversal note left out (an annotation, not a rewrite).
            and without_reversal(k.decision) is not distinct from without_reversal(b.decision)
            and without_reversal(k.why) is not distinct from without_reversal(b.why)
            and without_reversal(k.how_to_apply) is not distinct from without_reversal(b.how_to_apply)
    )
)
select l.pair_id, l.decision_id as element,
    case when a.decision_id is null then 'removed' else 'rewritten' end as detail,
    'ledger.md' as file, a.line,
    l.decision_id || case
        when a.decision_id is null then ' was removed (present in ' || l.before_seen
            || ', gone in ' || l.after_seen || '); reverse it with a new entry instead'
        else ' was rewritten between ' || l.before_seen || ' and ' || l.after_seen || ' ('
            || concat_ws(', ',
                case when without_reversal(a.decision) is distinct from without_reversal(l.decision)
                    then 'Decision' end,
                case when without_reversal(a.why) is distinct from without_reversal(l.why)
                    then 'Why' end,
                case when without_reversal(a.how_to_apply)
                    is distinct from without_reversal(l.how_to_apply) then 'How to apply' end)
            || ' changed); amend with a new entry instead'
    end as message
from lost l
left join ledger a on a.snapshot_id = l.after_id and a.decision_id = l.decision_id
-- The message compares with the entry of that ID now that differs in the fewest fields.
qualify row_number() over (
    partition by l.pair_id, l.decision_id, l.decision, l.why, l.how_to_apply
    order by (without_reversal(a.decision) is distinct from without_reversal(l.decision))::int
        + (without_reversal(a.why) is distinct from without_reversal(l.why))::int
        + (without_reversal(a.how_to_apply)
            is distinct from without_reversal(l.how_to_apply))::int, a.line
) = 1
