-- rule: BS-USELESS-01
-- gate: move
-- description: The manifest records a passing uselessness test (`Result: pass`) before the move.
-- reads: ops/manifest.md
-- skip: location = 'history' => ops/ removed at harvest
-- skip: commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
select s.snapshot_id, 'ops/manifest.md' as file, m.useless_result_line as line,
    case
        when not s.manifest_exists then 'there is no ops/manifest.md, so no uselessness test is recorded'
        when m.useless_result is null then 'the manifest records no uselessness test ''Result:'''
        else 'the uselessness test Result is ''' || m.useless_result || ''', not pass'
    end as message
from snapshots s
left join manifests m using (snapshot_id)
where m.useless_result is distinct from 'pass'
