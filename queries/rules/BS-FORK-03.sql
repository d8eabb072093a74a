-- rule: BS-FORK-03
-- gate: manifest
-- description: The manifest gate requires zero open forks.
-- reads: forks.md, ledger.md, ops/manifest.md
select snapshot_id, file, line,
    -- A fork whose heading has no readable ID is still open, and still named by its line.
    coalesce(fork_id, 'a fork whose heading has no readable F# ID') || case
        when marker = 'open' then ' is open; resolve it in the ledger or park it'
        -- A marker the census could not read may say open (fail closed, spec §3.1).
        else coalesce(' has the marker [' || marker_raw || '], which', ' has no marker, so it')
            || ' may be open; write [open] or [parked → …], or resolve it in the ledger'
    end as message
from forks
where marker = 'open' or marker is null
union all
-- A line meant as a fork but not written as its heading (`- F5 — … [open]`, a status table's
-- row) is a fork not read: it may be open (fail closed, spec §3.1), as an unknown marker may.
select snapshot_id, file, line,
    'could not read a fork, which may be open: ' || message
from parse_issues
where file = 'forks.md' and code = 'entry-not-heading'
