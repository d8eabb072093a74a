-- rule: BS-STATE-01
-- Along a session's history, Status only moves forward (open → stopping → harvested); a step
-- back fails the later snapshot.
select p.pair_id, 'Status' as element, b.status || ' → ' || a.status as detail,
    'state.md' as file, a.status_line as line,
    'Status moved backward from ' || b.status || ' (' || p.before_seen || ') to ' || a.status
        || ' (' || p.after_seen || ')' as message
from pairs p
join snapshots b on b.snapshot_id = p.before_id
join snapshots a on a.snapshot_id = p.after_id
where state_rank(a.status) < state_rank(b.status)
