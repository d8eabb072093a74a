-- rule: BS-SYNC-02
-- gate: session
-- description: Every fork raised by `twin (S#)` cites syncs whose result is reconciled (every S# the Raised by value names); a twin that cites no sync fails too.
-- reads: forks.md, ops/sync-log.md
-- skip: location = 'history' => ops/ removed at harvest
-- skip: commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
with events as (
    select *,
        min(line) filter (where kind = 'dispatch') over sync as dispatch_line,
        arg_min("at", line) filter (where kind = 'dispatch') over sync as dispatched_at
    from sync_events
    window sync as (partition by snapshot_id, sync_id)
),
outcome as (
    -- A result is the sync's when it follows its dispatch, in file order and in time (as
    -- BS-SYNC-01 and sync_pairs pair them): one written above it, or stamped before it, is
    -- no reply, and the sync is still in flight. A time that could not be read shows no
    -- order (fail closed: until stop 67 it passed as one after the dispatch; found by a hunt).
    select snapshot_id, sync_id,
        bool_or(kind = 'result' and result = 'reconciled' and (dispatch_line is null
            or (line > dispatch_line and coalesce("at" >= dispatched_at, false))))
            as reconciled,
        bool_or(kind = 'result' and result = 'reconciled' and line > dispatch_line
            and ("at" is null or dispatched_at is null)) as untimed,
        bool_or(kind = 'result' and result = 'reconciled') as answered,
        bool_or(kind = 'result' and result = 'failed') as failed,
        bool_or(kind = 'dispatch') as dispatched
    from events
    group by all
),
-- Sync-log lines the census could not read (BS-SYNC-01 fails on them): each may be the result of
-- the sync it begins with, or of any sync when it begins with none (the line's text ends the
-- issue's message), so a fork citing that sync cannot pass (fail closed, spec §3.1).
unread as (
    select snapshot_id, min(line) as line,
        nullif(regexp_extract(message, ': [ \t*_`]*(S[0-9]+)([^0-9A-Za-z]|$)', 1), '') as sync_id
    from parse_issues
    where file = 'ops/sync-log.md' and code = 'bad-sync-line'
    group by all
),
-- `Raised by: twin` with no S# is a parse issue whose rule is this one (rules.py).
cited as (
    select snapshot_id, file, coalesce(raised_by_line, line) as line, fork_id,
        unnest(raised_by_syncs) as sync_id
    from forks
    where raised_by_kind = 'twin'
)
select c.snapshot_id, c.file, c.line,
    coalesce(c.fork_id, 'fork') || ' is raised by twin (' || c.sync_id || '), but ' || c.sync_id || case
        when o.failed then ' failed'
        when u.line is not null then ' may have a result on ops/sync-log.md:' || u.line
            || ', which could not be read'
        when o.sync_id is null then ' is not in ops/sync-log.md'
        when o.untimed and not o.reconciled
            then ' has a reconciled result whose time, or its dispatch''s, could not be read'
        when o.dispatched and o.answered and not o.reconciled
            then ' has its reconciled result before its dispatch, so no reply to it'
        when o.dispatched and not o.reconciled then ' is still in flight'
        else ' has no reconciled result'
    end as message
from cited c
left join outcome o on o.snapshot_id = c.snapshot_id and o.sync_id = c.sync_id
left join (
    select snapshot_id, sync_id, min(line) as line from (
        select c2.snapshot_id, c2.sync_id, u.line
        from (select distinct snapshot_id, sync_id from cited) c2
        join unread u on u.snapshot_id = c2.snapshot_id
            and (u.sync_id is null or u.sync_id = c2.sync_id)
    ) group by all
) u on u.snapshot_id = c.snapshot_id and u.sync_id = c.sync_id
-- A sync with a failed result fails its forks even beside a reconciled one (fail closed).
where not coalesce(o.reconciled, false) or o.failed or u.line is not null
