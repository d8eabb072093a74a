-- rule: BS-MANIFEST-01
-- gate: session
-- description: Where ops/manifest.md exists: it has a Round, a valid Status and a table, and its current round routes every parked fork and every fragment.
-- reads: ops/manifest.md, forks.md, fragments/
-- skip: location = 'history' => ops/ removed at harvest
-- skip: commit_snapshot and not ops_exists => ops/ is not kept in git (a commit snapshot)
-- skip: not manifest_exists => no manifest
with current_rows as (
    -- Its text with each letter, digit or mark beyond ASCII wrapped in underscores (`é` is
    -- `_é_`), as the fragments' names below: RE2's \w is ASCII, so `é` ended a word and
    -- `résumé` named `sumé`; \pL in the patterns built per fragment and row cost seconds.
    select *,
        regexp_replace(what, '([^\x00-\x7f\PL]|[^\x00-\x7f\PN]|[^\x00-\x7f\PM])', '_\1_', 'g') as what_words,
        regexp_replace(source, '([^\x00-\x7f\PL]|[^\x00-\x7f\PN]|[^\x00-\x7f\PM])', '_\1_', 'g') as source_words
    from manifest_rows where "current"
),
fragment_words as (
    select *,
        regexp_replace(name, '([^\x00-\x7f\PL]|[^\x00-\x7f\PN]|[^\x00-\x7f\PM])', '_\1_', 'g') as name_words,
        regexp_replace(regexp_extract(file, '[^/]*$'), '([^\x00-\x7f\PL]|[^\x00-\x7f\PN]|[^\x00-\x7f\PM])', '_\1_', 'g') as file_words
    from fragments
),
routes_all_fragments as (
    -- The word in any case: `Thesis + Fragments` routes them all as `thesis + fragments` does;
    -- so does the folder, `fragments/`, also by a path to it (`../fragments/` from ops/, the
    -- session folder's), while `fragments/x.md` names one fragment only.
    select distinct snapshot_id from current_rows
    where regexp_matches(
        source, '(^|[^\pL\pN_/.-])(\.\.?/|[\pL\pN_./-]*-brainstorm/)?fragments/?([^\pL\pN_/.-]|$)', 'i'
    )
)
select snapshot_id, file, coalesce(round_line, line) as line,
    case
        when rounds = 0 then 'the manifest has no ''Round:'' line'
        else 'Round is not a whole number'
    end as message
from manifests
where round is null
union all
select snapshot_id, file, status_line,
    case
        when status is null then 'the manifest has no ''Status:'' line'
        else 'manifest Status ''' || status || ''' is not proposed, approved or applied'
    end
from manifests
where status is null or not valid_manifest_status(status)
union all
select snapshot_id, file, line, 'the manifest has no table (| # | What | Source | Destination | Action |)'
from manifests
where not has_table
union all
select f.snapshot_id, 'ops/manifest.md', null,
    case when f.marker = 'parked' then 'parked fork ' else 'fork ' end || f.fork_id
        || ' (forks.md:' || f.line || ') has ' || case when f.marker = 'parked' then ''
        -- A marker the census could not read may say parked (fail closed, spec §3.1).
        else coalesce('the marker [' || f.marker_raw || '], which may say parked, and ',
            'no marker, so it may be parked, and ') end
        || 'no manifest row naming it'
from forks f
join manifests m using (snapshot_id)
where (f.marker = 'parked' or f.marker is null) and f.fork_id is not null and not exists (
    select 1 from current_rows r
    where r.snapshot_id = f.snapshot_id
        -- Its number written somewhere in the row first, a plain test that spares the regular
        -- expressions (built per fork and row) every row that cannot name it: they made the
        -- rule quadratic, minutes for a thousand forks and rows (found by a hunt).
        and contains(concat_ws(' ', r.what, r.source), substr(f.fork_id, 2))
        -- The ID as a whole word, wrapped in emphasis or not (`_F4_` names F4), by its
        -- number: `F04` names F4 as the ID readers do (leading zeros dropped).
        and (regexp_matches(r.what, '(^|[^A-Za-z0-9])F0*' || substr(f.fork_id, 2) || '([^A-Za-z0-9]|$)')
            or regexp_matches(r.source, '(^|[^A-Za-z0-9])F0*' || substr(f.fork_id, 2) || '([^A-Za-z0-9]|$)'))
)
union all
select fr.snapshot_id, 'ops/manifest.md', null,
    'fragment ' || fr.file || ' has no manifest row naming it'
from fragment_words fr
join manifests m using (snapshot_id)
where fr.snapshot_id not in (select snapshot_id from routes_all_fragments)
    and not exists (
        select 1 from current_rows r
        where r.snapshot_id = fr.snapshot_id
            -- The name written somewhere in the row first (as for forks, above).
            and (contains(concat_ws(' ', r.what, r.source), fr.name)
                or contains(concat_ws(' ', r.what, r.source), regexp_extract(fr.file, '[^/]*$')))
            -- The name as a whole word, a hyphen or a dot within a name counting as part of
            -- it: `send-window-v2` and `send-window.v2.md` do not name `send-window`, while
            -- `send-window.md`, a sentence's last word `send-window.` and `c++` name theirs.
            and (regexp_matches(r.what_words, '(^|[^\w.-])' || regexp_escape(fr.name_words) || '(\.md)?(\.(\W|$)|[^\w.-]|$)')
                or regexp_matches(r.source_words, '(^|[^\w.-])' || regexp_escape(fr.name_words) || '(\.md)?(\.(\W|$)|[^\w.-]|$)')
                -- Its file name as it is, whatever its extension (`retry-schedule.yaml`).
                or regexp_matches(r.what_words, '(^|[^\w.-])' || regexp_escape(fr.file_words) || '(\.(\W|$)|[^\w.-]|$)')
                or regexp_matches(r.source_words, '(^|[^\w.-])' || regexp_escape(fr.file_words) || '(\.(\W|$)|[^\w.-]|$)'))
    )
