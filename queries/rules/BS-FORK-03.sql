-- rule: BS-FORK-03
-- gate: manifest
-- description: The manifest gate requires zero open forks.
-- reads: forks.md, ledger.md, ops/manifest.md
select snapshot_id, file, line,
    -- A fork whose heading has no readable ID is still open, and still named by its line.
    coalesce(fork_id, 'a fork whose heading has no readable F# ID')
        || ' is open; resolve it in the ledger or park it' as message
from forks
where marker = 'open'
