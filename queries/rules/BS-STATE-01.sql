-- rule: BS-STATE-01
-- gate: session
-- description: state.md's Status is present and one of open, stopping, harvested.
select
    snapshot_id,
    'state.md' as file,
    status_line as line,
    case
        when not state_exists then 'state.md is missing'
        when status is null then 'state.md has no ''Status:'' bullet'
        else 'Status ''' || status || ''' is not open, stopping or harvested'
    end as message
from snapshots
where status is null or status not in ('open', 'stopping', 'harvested')
