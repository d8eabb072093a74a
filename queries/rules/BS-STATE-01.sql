-- rule: BS-STATE-01
-- gate: session
-- description: state.md's Status is present and one of open, stopping, harvested; across a session's snapshots it never moves backward.
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
union all
-- Across snapshots: Status only moves forward (open → stopping → harvested).
select p.after_id, 'state.md', a.status_line,
    'Status moved backward from ' || b.status || ' (' || p.before_seen || ') to ' || a.status
        || ' (' || p.after_seen || ')'
from snapshot_pairs p
join snapshots b on b.snapshot_id = p.before_id
join snapshots a on a.snapshot_id = p.after_id
where list_position(['open', 'stopping', 'harvested'], a.status)
    < list_position(['open', 'stopping', 'harvested'], b.status)
