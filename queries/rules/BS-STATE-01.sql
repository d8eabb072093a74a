-- rule: BS-STATE-01
-- gate: session
-- description: state.md's Status is present and one of open, stopping, harvested; across a session's snapshots it never moves backward.
-- reads: state.md
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
where status is null or not valid_state(status)
