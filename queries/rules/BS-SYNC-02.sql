-- rule: BS-SYNC-02
-- gate: session
-- description: Every fork raised by `twin (S#)` cites a sync whose result is reconciled.
-- skip: location = 'history' => ops/ removed at harvest
-- skip: commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
with outcome as (
    select snapshot_id, sync_id,
        bool_or(kind = 'result' and result = 'reconciled') as reconciled,
        bool_or(kind = 'result' and result = 'failed') as failed,
        bool_or(kind = 'dispatch') as dispatched
    from sync_events
    group by all
)
select f.snapshot_id, f.file, coalesce(f.raised_by_line, f.line) as line,
    f.fork_id || ' is raised by twin (' || f.raised_by_sync || '), but ' || f.raised_by_sync || case
        when o.sync_id is null then ' is not in ops/sync-log.md'
        when o.failed then ' failed'
        when o.dispatched then ' is still in flight'
        else ' has no reconciled result'
    end as message
from forks f
left join outcome o on o.snapshot_id = f.snapshot_id and o.sync_id = f.raised_by_sync
where f.raised_by_kind = 'twin' and not coalesce(o.reconciled, false)
