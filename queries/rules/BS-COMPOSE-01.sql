-- rule: BS-COMPOSE-01
-- gate: session
-- description: thesis.md's `Current as of:` stamp equals state.md's `Last compose` (as instants; never equals only never).
-- reads: state.md, thesis.md
select snapshot_id,
    -- The finding names the side that is missing or unreadable (state.md when it is Last compose).
    case when state_side then 'state.md' else 'thesis.md' end as file,
    case when state_side then last_compose_line else thesis_stamp_line end as line,
    case
        when not state_exists then 'state.md is missing, so there is no Last compose to match'
        when last_compose_raw is null then 'state.md has no ''Last compose:'' bullet'
        when last_compose is null and not last_compose_never
            then 'Last compose ''' || last_compose_raw || ''' is not a timestamp'
        when not thesis_exists then 'thesis.md is missing, so its stamp cannot match Last compose'
        when thesis_stamp_raw is null then 'thesis.md has no ''Current as of:'' stamp'
        when thesis_stamp is null and not thesis_stamp_never
            then 'thesis stamp ''' || thesis_stamp_raw || ''' is not a timestamp'
        else 'thesis stamp ' || thesis_stamp_raw || ' differs from Last compose '
            || last_compose_raw || '; compose again'
    end as message
from (
    select *,
        -- The first three messages below are state.md's: missing, no bullet, no timestamp.
        not state_exists or last_compose_raw is null
            or (last_compose is null and not coalesce(last_compose_never, false)) as state_side
    from snapshots
)
where not (
    (coalesce(thesis_stamp_never, false) and coalesce(last_compose_never, false))
    or (thesis_stamp is not null and last_compose is not null and thesis_stamp = last_compose)
)
