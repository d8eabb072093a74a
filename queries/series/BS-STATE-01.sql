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
union all
-- A step whose earlier side shows no Status to rank (state.md missing, or a value that is none
-- of the three) is measured from the last Status the session showed at an earlier census
-- point: a snapshot that could not be read does not hide a step back.
select p.pair_id, 'Status', k.status || ' → ' || a.status, 'state.md', a.status_line,
    'Status moved backward from ' || k.status || ' (' || k.seen || ') to ' || a.status
        || ' (' || p.after_seen || ')'
from pairs p
join snapshots a on a.snapshot_id = p.after_id
join (
    select u.pair_id,
        arg_max(s.status, {position: e.position, working: o."commit" is null,
            observed: o.observed_at}) as status,
        arg_max(seen_in(o.run_id, o."commit"), {position: e.position,
            working: o."commit" is null, observed: o.observed_at}) as seen
    from pairs u
    join snapshots b on b.snapshot_id = u.before_id and state_rank(b.status) is null
    join points now on now.point = u.point
    join observations o on o.session_key = u.session_key and o.root = u.root
    join run_points r on r.run_id = o.run_id
    join points e on e.point = r.point and e.position < now.position
    join snapshots s on s.snapshot_id = o.snapshot_id and state_rank(s.status) is not null
    group by u.pair_id
) k on k.pair_id = p.pair_id
where state_rank(a.status) < state_rank(k.status)
