-- rule: BS-THESIS-01
-- gate: session
-- description: thesis.md exists, has a `Current as of:` stamp that parses, and has ## Claim, ## Argument and ## What changed.
-- reads: thesis.md
select snapshot_id, 'thesis.md' as file, thesis_stamp_line as line,
    case
        when thesis_stamp_raw is null then 'thesis.md has no ''Current as of:'' stamp'
        else 'thesis stamp ''' || thesis_stamp_raw || ''' is not an ISO 8601 timestamp'
    end as message
from snapshots
where thesis_exists and thesis_stamp is null and not coalesce(thesis_stamp_never, false)
union all
select snapshot_id, 'thesis.md', null, 'thesis.md is missing'
from snapshots
where not thesis_exists
union all
select snapshot_id, 'thesis.md', null, 'thesis.md has no ''## ' || heading || ''' heading'
from (
    select snapshot_id, 'Claim' as heading from snapshots where thesis_exists and not thesis_has_claim
    union all
    select snapshot_id, 'Argument' from snapshots where thesis_exists and not thesis_has_argument
    union all
    select snapshot_id, 'What changed' from snapshots where thesis_exists and not thesis_has_what_changed
)
