-- rule: BS-FORK-03
-- gate: manifest
-- description: The manifest gate requires zero open forks.
select snapshot_id, file, line, fork_id || ' is open; resolve it in the ledger or park it' as message
from forks
where marker = 'open'
