-- rule: CENSUS-LOC-01
-- gate: session
-- description: The folder's location agrees with its lifecycle: a research folder is not harvested; a history folder is harvested and has no ops/.
-- reads: state.md
select snapshot_id, 'state.md' as file, status_line as line,
    'Status is harvested but the folder is not under docs/history/brainstorms/; finish the move to docs/history/brainstorms/'
        || topic || '/' as message
from snapshots
where location = 'research' and status = 'harvested'
union all
select snapshot_id, 'state.md', status_line,
    'a history folder must have Status harvested, not ' || coalesce('''' || status || '''', 'none')
from snapshots
where location = 'history' and status is distinct from 'harvested'
union all
select snapshot_id, 'ops/', null, 'a history folder still has ops/; it is deleted at harvest'
from snapshots
where location = 'history' and ops_exists
