-- rule: BS-LEDGER-01
-- Along a session's history the ledger is append-only: an entry never disappears and its
-- Decision, Why and How to apply never change (amend or reverse with a new entry instead).
select p.pair_id, b.decision_id as element,
    case when a.decision_id is null then 'removed' else 'rewritten' end as detail,
    'ledger.md' as file, a.line,
    b.decision_id || case
        when a.decision_id is null then ' was removed (present in ' || p.before_seen
            || ', gone in ' || p.after_seen || '); reverse it with a new entry instead'
        else ' was rewritten between ' || p.before_seen || ' and ' || p.after_seen || ' ('
            || concat_ws(', ',
                case when a.decision is distinct from b.decision then 'Decision' end,
                case when a.why is distinct from b.why then 'Why' end,
                case when a.how_to_apply is distinct from b.how_to_apply then 'How to apply' end)
            || ' changed); amend with a new entry instead'
    end as message
from pairs p
join ledger b on b.snapshot_id = p.before_id and b.decision_id is not null
left join ledger a on a.snapshot_id = p.after_id and a.decision_id = b.decision_id
where a.decision_id is null
    or a.decision is distinct from b.decision
    or a.why is distinct from b.why
    or a.how_to_apply is distinct from b.how_to_apply
