-- rule: BS-HARVEST-01
-- gate: move
-- description: No destination document links into the session folder (research: every existing path a Destination cell names, in every round, each document in it when the path is a folder or matching it when a pattern; history: every Markdown document outside docs/research/ and docs/history/).
-- reads: ops/manifest.md
-- skip: location = 'research' and commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
-- skip: location = 'research' and not manifest_exists => no manifest
select l.snapshot_id, '/' || l.file as file, l.line,
    '/' || l.file || ' links into the session folder (' || l.target || '); point it at the harvested document instead' as message
from links l
join snapshots s using (snapshot_id)
where (s.location = 'research' and exists (
        select 1 from manifest_destinations m
        where m.snapshot_id = l.snapshot_id and m.destination_exists
            -- A destination that is a folder: each document in it (or below); one written as
            -- a pattern (docs/features/*.md): each document it matches.
            and (m.destination_path = l.file
                or starts_with(l.file, m.destination_path || '/')
                or (contains(m.destination_path, '*') and l.file GLOB m.destination_path))))
    or (s.location = 'history'
        and not (l.file like 'docs/research/%' or l.file like 'docs/history/%'))
