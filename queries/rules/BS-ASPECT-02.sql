-- rule: BS-ASPECT-02
-- gate: manifest
-- description: The aspect map exists with at least one aspect, and no aspect is still `none yet`.
-- reads: state.md, ops/manifest.md
select snapshot_id, 'state.md' as file, aspect_map_line as line,
    case
        when not state_exists then 'state.md is missing, so there is no aspect map'
        when aspect_map_line is null then 'state.md has no ''## Aspect map'''
        else 'the aspect map has no aspects'
    end as message
from snapshots s
where not exists (select 1 from aspects a where a.snapshot_id = s.snapshot_id)
union all
select snapshot_id, file, line,
    'aspect ''' || aspect || ''' is still none yet; cover it before the manifest'
from aspect_refs
where kind = 'none_yet'
