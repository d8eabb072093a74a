-- rule: BS-LEDGER-01
-- gate: session
-- description: Ledger IDs are unique and ascend in file order; every entry has Decision, Why and How to apply; a `Reversed by D#` and a `Reverses: D#` name an entry that exists; across snapshots no entry disappears or has its Decision, Why or How to apply rewritten.
-- reads: ledger.md
with ordered as (
    select *,
        max(decision_num) over (
            partition by snapshot_id order by position rows between unbounded preceding and 1 preceding
        ) as highest_before
    from ledger
)
select snapshot_id, file, line,
    case
        when decision_id is null then 'ledger heading has no D# ID (expected ## D# — title)'
        when not heading_ok then decision_id || ' heading does not parse (expected ## D# — title)'
        when decision_num = highest_before then decision_id || ' is used twice; ledger IDs are unique'
        else decision_id || ' comes after D' || highest_before || '; ledger IDs ascend in file order'
    end as message
from ordered
where decision_id is null or not heading_ok or decision_num <= highest_before
union all
-- An empty field is named at its own line; a missing one (or a row an older census wrote)
-- at the heading.
select snapshot_id, file, line,
    decision_id || case when value is null then ' has no ''' else ' has an empty ''' end
        || field || ':'''
from (
    select snapshot_id, file, coalesce(decision_line, line) as line, decision_id,
        'Decision' as field, decision as value
    from ledger where coalesce(decision, '') = ''
    union all
    select snapshot_id, file, coalesce(why_line, line), decision_id, 'Why', why
    from ledger where coalesce(why, '') = ''
    union all
    select snapshot_id, file, coalesce(how_to_apply_line, line), decision_id, 'How to apply',
        how_to_apply
    from ledger where coalesce(how_to_apply, '') = ''
)
where decision_id is not null
union all
-- Every D# a `Reversed by` or `Reverses:` names counts, named at the line that names it;
-- rows an older census wrote have only the first (the scalar column) or no lines (the
-- first annotation's line stands for each).
select snapshot_id, file, line,
    case kind
        when 'reversed by' then coalesce(decision_id, 'an entry with no D# ID') || ' is reversed by '
        else coalesce(decision_id, 'entry') || ' reverses '
    end || target || ', which is not a ledger entry'
from (
    select snapshot_id, file, coalesce(named_line, reversed_by_line) as line, decision_id,
        'reversed by' as kind, target
    from (
        select *, unnest(coalesce(reversed_by_ids, [reversed_by])) as target,
            unnest(coalesce(reversed_by_lines, [reversed_by_line])) as named_line
        from ledger where reversed_by is not null
    )
    union all
    select snapshot_id, file, coalesce(named_line, reverses_line, line), decision_id,
        'reverses', target
    from (
        select *, unnest(coalesce(reverses_ids, [reverses])) as target,
            unnest(coalesce(reverses_lines, [reverses_line])) as named_line
        from ledger where reverses is not null
    )
) l
where not exists (
    select 1 from ledger o where o.snapshot_id = l.snapshot_id and o.decision_id = l.target
)
