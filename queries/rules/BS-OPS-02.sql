-- rule: BS-OPS-02
-- gate: session
-- description: No file under the session's ops/ is tracked by git (in the index, or in any commit with --git-history).
-- reads: none
-- skip: not git_context => no git context
select
    snapshot_id,
    file,
    null as line,
    file || ' is tracked by git' || coalesce(' (commit ' || "commit" || ')', '')
        || '; untrack it with git rm --cached and keep ops/.gitignore' as message
from tracked_files
-- ops itself tracked: a link committed in its place, whose target git may track too (found by
-- a hunt: it passed), or a repository committed there as a gitlink.
where lower(file) like 'ops/%' or lower(file) = 'ops'
