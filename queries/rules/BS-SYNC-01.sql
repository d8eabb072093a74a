-- rule: BS-SYNC-01
-- gate: session
-- description: Every sync dispatch has exactly one result after it with the same S#; only the newest dispatch (the last dispatch line in the file) may be in flight.
-- reads: ops/sync-log.md
-- skip: location = 'history' => ops/ removed at harvest
-- skip: commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
with per_sync as (
    select snapshot_id, file, sync_id, sync_num,
        count(*) filter (where kind = 'dispatch') as dispatches,
        count(*) filter (where kind = 'result') as results,
        min(line) filter (where kind = 'dispatch') as dispatch_line,
        max(line) filter (where kind = 'dispatch') as last_dispatch_line,
        min(line) filter (where kind = 'result') as result_line,
        max(line) filter (where kind = 'result') as last_result_line,
        arg_min("at", line) filter (where kind = 'dispatch') as dispatched_at,
        arg_min(at_raw, line) filter (where kind = 'dispatch') as dispatched_raw,
        arg_min("at", line) filter (where kind = 'result') as result_at,
        arg_min(at_raw, line) filter (where kind = 'result') as result_raw
    from sync_events
    group by all
),
-- The newest dispatch is the last one in file order (the facilitator appends), spec §3.1.
newest as (
    select snapshot_id, arg_max(sync_id, line) as newest
    from sync_events where kind = 'dispatch' group by all
)
select p.snapshot_id, p.file,
    case
        when dispatches > 1 then last_dispatch_line
        when results > 1 then last_result_line
        when dispatches = 0 then result_line
        else coalesce(result_line, dispatch_line)
    end as line,
    case
        when dispatches > 1 then sync_id || ' is dispatched ' || dispatches || ' times'
        when results > 1 then sync_id || ' has ' || results || ' result lines; a dispatch gets one'
        when dispatches = 0 then sync_id || ' has a result line but no dispatch'
        when results = 1 and result_line < dispatch_line then sync_id || '''s result comes before its dispatch'
        when results = 1 then sync_id || '''s result at ' || result_raw || ' is before its dispatch at '
            || dispatched_raw
        else sync_id || ' has no result, and only the newest dispatch (' || n.newest || ') may be in flight'
    end as message
from per_sync p
left join newest n using (snapshot_id)
where dispatches > 1
    or results > 1
    or dispatches = 0
    or (results = 1 and result_line < dispatch_line)
    -- A result timestamped before its own dispatch answers no dispatch of it: a copying error
    -- that shows in time only (found by a hunt).
    or (dispatches = 1 and results = 1 and result_at < dispatched_at)
    or (results = 0 and sync_id <> n.newest)
