-- rule: BS-COMPOSE-02
-- gate: manifest
-- description: Last compose is strictly later than the newest capture turn; a compose over unsynced capture is stale.
-- reads: state.md, ops/capture.md, ops/manifest.md
-- skip: location = 'history' => ops/ removed at harvest
-- skip: commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
select snapshot_id, 'state.md' as file, last_compose_line as line,
    case
        when coalesce(last_compose_never, false)
            then 'Last compose is never, but ops/capture.md has turns up to '
                || newest_turn || '; compose first'
        when last_compose is null
            then 'Last compose is missing or unreadable, and ops/capture.md has turns; compose first'
        else 'Last compose ' || last_compose_raw || ' is not later than the newest capture turn ('
            || newest_turn || '); the compose is stale'
    end as message
from (
    -- The turn's instant with its fraction when it has one (`10:14:07.5Z`): printed to the
    -- second, a turn half a second after `Last compose 10:14:07Z` looked equal to it.
    select *,
        rtrim(rtrim(strftime(newest_turn_at, '%Y-%m-%dT%H:%M:%S.%f'), '0'), '.') || 'Z'
            as newest_turn
    from snapshots
)
where newest_turn_at is not null
    and (last_compose is null or last_compose <= newest_turn_at)
