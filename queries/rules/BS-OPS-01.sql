-- rule: BS-OPS-01
-- gate: session
-- description: ops/.gitignore exists and has a line that is exactly `*`, so ops/ never enters git.
-- reads: ops/.gitignore
-- skip: location = 'history' => ops/ removed at harvest
-- skip: commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
select
    snapshot_id,
    'ops/.gitignore' as file,
    null as line,
    case
        when not ops_exists then 'ops/ is missing; create ops/.gitignore holding the single line *'
        when not gitignore_exists then 'ops/.gitignore is missing; create it holding the single line *'
        else 'ops/.gitignore has no line that is exactly *; add one'
    end as message
from snapshots
where not coalesce(gitignore_star, false)
