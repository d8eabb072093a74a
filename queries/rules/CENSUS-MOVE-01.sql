-- rule: CENSUS-MOVE-01
-- gate: move
-- description: Before the move, the manifest exists and its Status is applied.
-- reads: ops/manifest.md
-- skip: location = 'history' => ops/ removed at harvest
-- skip: commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
select s.snapshot_id, 'ops/manifest.md' as file, m.status_line as line,
    case
        when not s.manifest_exists then 'there is no ops/manifest.md; the move needs an applied manifest'
        else 'manifest Status is ' || coalesce('''' || m.status || '''', 'missing') || ', not applied'
    end as message
from snapshots s
left join manifests m using (snapshot_id)
where m.status is distinct from 'applied'
