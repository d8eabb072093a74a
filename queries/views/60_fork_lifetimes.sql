-- Fork lifetimes (spec §6, §7): one row per fork, identified by (session_key, fork_id).
--
-- fork_lifetimes_for(run_ids) computes them over the observations of the given runs
-- (a VARCHAR[]; NULL for every committed run), so that a statistic split by label sees
-- only the runs that carry the label; fork_lifetimes_of(run_ids, session_keys) the same for
-- some sessions only (NULL: all); fork_lifetimes_at(point) the forks of that census point's
-- sessions over its runs and every earlier one's (what the point knew, as stats counts it;
-- later crawls never change it); the view
-- fork_lifetimes is the all-runs case.
--
-- A session's snapshots are its observations under one crawl root (a series, as in
-- history_nodes) ordered by observed_at, a commit's never after the start of the first run
-- that saw it nor after its descendants' (a clock running ahead; docs/time-model.md) (ties:
-- commits of one second by git ancestry, then commits before the working tree, then commit
-- and run, then stage and snapshot id);
-- repeated consecutive observations of one snapshot count once. One moment (a run's working
-- tree, or a commit) that shows the session in two folders is one snapshot, the folder that
-- working_nodes_in picks: the research folder of a move half done (a stale history copy is
-- not the session's latest state), the first checkout by repository path. In each snapshot a fork is
-- resolved, open or parked as fork_states_in says. A snapshot's content_time here is never
-- later than the end of the first crawl that read it (a clock running ahead), nor is a sync's
-- dispatch or result time than the end of the first crawl that read a line of that sync.
--
--   raised_by  the Raised by of the first snapshot listing it (its kind and S#, one listing's);
--   raised_at  the dispatch time of S# for `Raised by: twin (S#)` (the twin's only, not a
--              probe's or the user's that cites a sync) when a dispatch line of S#
--              is in the session's sync log in any of its snapshots (of several S# named,
--              the earliest such dispatch, raised_by_sync then naming it); else the content_time
--              of the first snapshot in which the fork is open (if that is before its close);
--              else unknown. Unknown too when a named sync's dispatch line is shown but its
--              time could be read in no snapshot (it may be the earliest).
--   closed_at  the content_time of the first snapshot in which it is resolved or parked,
--              with close_kind; unless it is open in the latest snapshot (reopened), which
--              always makes it censored, never closed.
--   censored   open in the session's latest snapshot: censored at that content_time. A fork
--              that vanishes from forks.md without a resolving ledger entry (`vanished`) is
--              censored at the content_time of the last snapshot that lists it. Where that
--              snapshot has none, at the last earlier one since the fork was first seen that has.
--   hours      raise to close (or to censoring); null when either time is unknown or the
--              close precedes the raise.
--   syncs      reconciled syncs (no failed result: sync health's count) dispatched after
--              the raise and reconciled by the close (or censoring), read from the sync
--              log of that closing (censoring) snapshot, or, when it has none (a commit:
--              git never holds ops/), of the first later snapshot of the series that has
--              one (the log is append-only, so it still shows them); null when hours is
--              null or no such snapshot has ops/sync-log.md.
-- fork_states_in(snapshot_ids): each fork's state in each snapshot (a VARCHAR[]; NULL for
-- every snapshot), the one definition the lifetimes and the report's changes read:
-- `resolved` when a ledger Resolves names it (whatever forks.md says), else `open` when
-- forks.md lists it with a marker other than parked (an unreadable marker counts as open,
-- never as closed), else `parked`; with the raiser and title of its first listing.
CREATE OR REPLACE MACRO fork_states_in(snapshot_ids) AS TABLE
WITH asked AS (
    -- Two branches, as in sync_pairs_of: a list filters the rows before they are grouped.
    SELECT snapshot_id, fork_id, line, title, marker, raised_by_kind, raised_by_sync,
        raised_by_syncs, false AS resolved
    FROM forks
    WHERE fork_id IS NOT NULL AND snapshot_ids IS NULL
    UNION ALL
    SELECT snapshot_id, fork_id, line, title, marker, raised_by_kind, raised_by_sync,
        raised_by_syncs, false
    FROM forks
    SEMI JOIN (SELECT unnest(snapshot_ids) AS snapshot_id) USING (snapshot_id)
    WHERE fork_id IS NOT NULL
    UNION ALL
    SELECT snapshot_id, fork_id, NULL, NULL, NULL, NULL, NULL, NULL, true
    FROM ledger_resolves
    WHERE regexp_full_match(fork_id, 'F[0-9]+') AND snapshot_ids IS NULL
    UNION ALL
    SELECT snapshot_id, fork_id, NULL, NULL, NULL, NULL, NULL, NULL, true
    FROM ledger_resolves
    SEMI JOIN (SELECT unnest(snapshot_ids) AS snapshot_id) USING (snapshot_id)
    WHERE regexp_full_match(fork_id, 'F[0-9]+')
)
SELECT snapshot_id, fork_id,
    CASE
        WHEN bool_or(resolved) THEN 'resolved'
        WHEN bool_or(NOT resolved AND marker IS DISTINCT FROM 'parked') THEN 'open'
        ELSE 'parked'
    END AS state,
    arg_min(raised_by_kind, line) FILTER (WHERE raised_by_kind IS NOT NULL) AS raised_by,
    -- From the same listing as raised_by (arg_min would skip its null and take another's S#).
    arg_min_null(raised_by_sync, line) FILTER (WHERE raised_by_kind IS NOT NULL) AS raised_by_sync,
    arg_min(title, line) FILTER (WHERE NOT resolved) AS title,
    arg_min_null(raised_by_syncs, line) FILTER (WHERE raised_by_kind IS NOT NULL)
        AS raised_by_syncs
FROM asked
GROUP BY snapshot_id, fork_id;

CREATE OR REPLACE MACRO fork_lifetimes_of(run_ids, session_keys) AS TABLE
WITH RECURSIVE asked AS (
    -- Every session, or those asked for: two branches, so that a list of sessions filters the
    -- observations before anything is joined (an OR of both would filter them after); then
    -- one observation per moment, as the header says.
    SELECT * EXCLUDE (location, repo_path, path)
    FROM (
        SELECT session_key, root, snapshot_id, run_id, observed_at, "commit", parents, repo,
            topic, location, repo_path, path
        FROM observations
        WHERE session_keys IS NULL AND (run_ids IS NULL OR list_contains(run_ids, run_id))
        UNION ALL
        SELECT session_key, root, snapshot_id, run_id, observed_at, "commit", parents, repo,
            topic, location, repo_path, path
        FROM observations
        SEMI JOIN (SELECT unnest(session_keys) AS session_key) USING (session_key)
        WHERE run_ids IS NULL OR list_contains(run_ids, run_id)
    )
    QUALIFY row_number() OVER (
        PARTITION BY session_key, root, run_id, "commit"
        ORDER BY location = 'research' DESC, repo_path, path, snapshot_id) = 1
),
first_seen AS (
    -- A commit's clock for ordering: its date, but never after the start of the first run
    -- that saw it (that run's working tree comes after it), nor after any of its descendants'
    -- (git ancestry orders commits among themselves): a clock running ahead (a commit dated
    -- 2030) made it the latest snapshot, so a fork resolved since stayed open.
    SELECT o.session_key, o.root, o."commit", any_value(o.parents) AS parents,
        least(min(o.observed_at), min(r.started_at)) AS order_at,
        min(r.finished_at) AS read_by
    FROM asked o
    JOIN run_points r USING (run_id)
    WHERE o."commit" IS NOT NULL
    GROUP BY o.session_key, o.root, o."commit"
),
edges AS (
    SELECT session_key, root, "commit", unnest(parents) AS parent FROM first_seen
),
bounded AS (
    -- Each commit with its clock, and each ancestor dated after a descendant with that one's.
    SELECT session_key, root, "commit", order_at FROM first_seen
    UNION
    SELECT p.session_key, p.root, p."commit", b.order_at
    FROM bounded b
    JOIN edges e ON e.session_key = b.session_key AND e.root = b.root AND e."commit" = b."commit"
    JOIN first_seen p
        ON p.session_key = e.session_key AND p.root = e.root AND p."commit" = e.parent
    WHERE b.order_at < p.order_at
),
clocked AS (
    SELECT f.session_key, f.root, f."commit", f.parents, f.read_by, min(b.order_at) AS order_at
    FROM first_seen f
    JOIN bounded b USING (session_key, root, "commit")
    GROUP BY f.session_key, f.root, f."commit", f.parents, f.read_by
),
ties AS (
    -- Commits of a series ordered at the same second as another: git ancestry orders them,
    -- where the order of their hashes would put a close before the raise half the time.
    SELECT session_key, root, order_at, "commit", parents
    FROM clocked
    QUALIFY count(*) OVER (PARTITION BY session_key, root, order_at) > 1
),
chain AS (
    SELECT session_key, root, order_at, "commit", 0 AS depth FROM ties
    UNION ALL
    SELECT t.session_key, t.root, t.order_at, t."commit", c.depth + 1
    FROM chain c
    JOIN ties t
        ON t.session_key = c.session_key AND t.root = c.root AND t.order_at = c.order_at
            AND list_contains(t.parents, c."commit")
),
depths AS (
    -- A commit's place among its second's: how many of them lie before it along ancestry.
    SELECT session_key, root, "commit", max(depth) AS depth FROM chain GROUP BY ALL
),
obs AS (
    SELECT o.* EXCLUDE (parents), coalesce(k.order_at, o.observed_at) AS order_at,
        coalesce(d.depth, 0) AS depth,
        -- No later than the end of the first crawl that read it (what a crawl read was
        -- written before it ended): a later one is a clock running ahead (Last compose 2030),
        -- which gave a fork open for years, or a close before its raise. least skips a null,
        -- so a snapshot without a content time keeps none.
        CASE WHEN s.content_time IS NOT NULL
            THEN least(s.content_time, coalesce(k.read_by, r.finished_at)) END AS content_time,
        coalesce(k.read_by, r.finished_at) AS read_by,
        s.sync_log_exists, stage_rank(s.stage) AS stage_rank
    FROM asked o
    JOIN snapshots s USING (snapshot_id)
    JOIN run_points r USING (run_id)
    LEFT JOIN clocked k USING (session_key, root, "commit")
    LEFT JOIN depths d USING (session_key, root, "commit")
),
ordered AS (
    SELECT *, lag(snapshot_id) OVER (
        PARTITION BY session_key, root
        ORDER BY order_at, "commit" IS NULL, depth, "commit", run_id, stage_rank, snapshot_id
    ) AS previous
    FROM obs
),
seq AS (
    SELECT *,
        row_number() OVER (
            PARTITION BY session_key, root
            ORDER BY order_at, "commit" IS NULL, depth, "commit", run_id, stage_rank, snapshot_id
        ) AS seq,
        count(*) OVER (PARTITION BY session_key, root) AS snapshots
    FROM ordered
    WHERE previous IS DISTINCT FROM snapshot_id
),
states AS (
    -- For some sessions, only their snapshots' forks are read (the rest would be joined
    -- away, after every fork of the corpus was grouped).
    FROM fork_states_in(
        CASE WHEN session_keys IS NOT NULL THEN (SELECT list(DISTINCT snapshot_id) FROM obs) END)
),
timeline AS (
    SELECT q.session_key, q.root, q.seq, q.snapshots, q.content_time IS NOT NULL AS timed, st.*
    FROM seq q
    JOIN states st USING (snapshot_id)
),
per_fork AS (
    SELECT session_key, root, fork_id,
        any_value(snapshots) AS snapshots,
        min(seq) AS first_seq,
        max(seq) FILTER (WHERE state <> 'resolved') AS last_listed_seq,
        -- The first snapshot listing it open that has a content time: a commit's snapshot
        -- holds no ops/ (git never does), so with Last compose `never` it has none, and the
        -- fork is still timed by the next (with --git-history as without).
        min(seq) FILTER (WHERE state = 'open' AND timed) AS open_seq,
        min(seq) FILTER (WHERE state IN ('resolved', 'parked')) AS close_seq,
        arg_min(state, seq) FILTER (WHERE state IN ('resolved', 'parked')) AS first_close_kind,
        bool_or(state = 'open' AND seq = snapshots) AS open_latest,
        arg_min(raised_by, seq) FILTER (WHERE raised_by IS NOT NULL) AS raised_by,
        -- The first listing's S#, as raised_by is the first listing's raiser: a fork listed
        -- `user` and later `twin (S2)` is the user's, raised when first seen open.
        arg_min_null(raised_by_sync, seq) FILTER (WHERE raised_by IS NOT NULL) AS raised_by_sync,
        arg_min_null(raised_by_syncs, seq) FILTER (WHERE raised_by IS NOT NULL)
            AS raised_by_syncs,
        arg_max(title, seq) FILTER (WHERE title IS NOT NULL) AS title
    FROM timeline
    GROUP BY session_key, root, fork_id
),
syncs AS (
    -- The syncs of the asked sessions' snapshots (of every snapshot when all are asked).
    FROM sync_pairs_of(
        CASE WHEN session_keys IS NOT NULL THEN (SELECT list(DISTINCT snapshot_id) FROM seq) END)
),
sync_read AS (
    -- Each sync line of a series' snapshots (each snapshot once), with the sync's times as
    -- content times: no later than the end of the first crawl that read a line of it (a twin's
    -- clock running ahead dispatched S3 in 2030, and the fork it raised closed before its
    -- raise, with no lifetime). A window, not a join back on sync_id: DuckDB joined every S1
    -- of the corpus with every other first (14 million rows for 3,000 sessions).
    SELECT q.session_key, q.root, p.*,
        min(q.read_by) OVER (PARTITION BY q.session_key, q.root, p.sync_id) AS read_by
    FROM (SELECT session_key, root, snapshot_id, min(read_by) AS read_by FROM seq GROUP BY ALL) q
    JOIN syncs p USING (snapshot_id)
),
dispatched AS (
    -- A dispatch shown in some snapshot but timed in none has an unknown time (null), not no
    -- dispatch: least skips a null, so the read_by bound applies only to a time read.
    SELECT session_key, root, sync_id,
        CASE WHEN min(dispatched_at) IS NOT NULL
            THEN least(min(dispatched_at), any_value(read_by)) END AS dispatched_at
    FROM sync_read
    WHERE dispatch_line IS NOT NULL
    GROUP BY session_key, root, sync_id
),
raise_syncs AS (
    -- Every S# a Raised by names counts (spec §3.1): the fork is raised at the earliest
    -- dispatch among them that a log shows, not only at the first one's (`twin (S7, S2)`
    -- with S7 never dispatched was timed as if it named no sync). Only the twin's: a probe or
    -- the user citing a sync (`probe (S2)`) did not raise the fork by it (§7).
    -- A named sync dispatched at a time no snapshot shows could be the earliest: the raise
    -- time is then unknown (fail closed), not the first snapshot showing the fork open.
    SELECT f.session_key, f.root, f.fork_id,
        arg_min(d.sync_id, d.dispatched_at) AS sync_id, min(d.dispatched_at) AS dispatched_at,
        bool_or(d.dispatched_at IS NULL) AS untimed
    FROM (
        SELECT session_key, root, fork_id, unnest(raised_by_syncs) AS sync_id
        FROM per_fork
        WHERE raised_by = 'twin'
    ) f
    JOIN dispatched d USING (session_key, root, sync_id)
    GROUP BY f.session_key, f.root, f.fork_id
),
fates AS (
    SELECT f.* EXCLUDE (raised_by_sync),
        coalesce(d.sync_id, f.raised_by_sync) AS raised_by_sync,
        CASE WHEN NOT f.open_latest THEN f.first_close_kind END AS close_kind,
        CASE
            WHEN f.open_latest THEN f.snapshots
            WHEN f.close_seq IS NOT NULL THEN f.close_seq
            ELSE f.last_listed_seq
        END AS end_seq,
        d.dispatched_at AS sync_raised_at,
        coalesce(d.untimed, false) AS sync_untimed
    FROM per_fork f
    LEFT JOIN raise_syncs d USING (session_key, root, fork_id)
),
timed AS (
    SELECT f.*,
        o.content_time AS open_at,
        CASE WHEN e.content_time IS NULL AND f.close_kind IS NULL THEN (
            -- Censored where its last snapshot has no content time (`Last compose: never`,
            -- no turn, no sync line): at the last one since it was first seen that has one,
            -- where it was still not closed; every open fork enters the estimate (§7).
            SELECT arg_max(g.content_time, g.seq) FROM seq g
            WHERE g.session_key = f.session_key AND g.root = f.root AND g.seq < f.end_seq
                AND g.seq >= f.first_seq AND g.content_time IS NOT NULL
        ) ELSE e.content_time END AS end_at,
        (
            SELECT arg_min(g.snapshot_id, g.seq) FROM seq g
            WHERE g.session_key = f.session_key AND g.root = f.root AND g.seq >= f.end_seq
                AND g.sync_log_exists
        ) AS log_snapshot,
        e.run_id AS end_run_id,
        e.repo,
        e.topic,
        fs.content_time AS first_seen_at,
        fs.run_id AS first_run_id
    FROM fates f
    JOIN seq e ON e.session_key = f.session_key AND e.root = f.root AND e.seq = f.end_seq
    JOIN seq fs ON fs.session_key = f.session_key AND fs.root = f.root AND fs.seq = f.first_seq
    LEFT JOIN seq o ON o.session_key = f.session_key AND o.root = f.root AND o.seq = f.open_seq
        AND f.open_seq <= f.end_seq
),
raised AS (
    SELECT *,
        CASE WHEN NOT sync_untimed THEN coalesce(sync_raised_at, open_at) END AS raised_at,
        CASE
            WHEN sync_untimed THEN NULL
            WHEN sync_raised_at IS NOT NULL THEN 'sync'
            WHEN open_at IS NOT NULL THEN 'first_open'
        END AS raise_source
    FROM timed
),
lived AS (
    SELECT *,
        CASE WHEN raised_at IS NOT NULL AND end_at IS NOT NULL AND end_at >= raised_at
            THEN (epoch_ms(end_at) - epoch_ms(raised_at)) / 3600000.0
        END AS hours
    FROM raised
),
sync_counts AS (
    SELECT l.session_key, l.root, l.fork_id, count(*) AS syncs
    FROM lived l
    JOIN sync_read p
        ON p.session_key = l.session_key AND p.root = l.root AND p.snapshot_id = l.log_snapshot
    WHERE l.hours IS NOT NULL
        -- Reconciled as sync health counts it: a later failed result unmakes it.
        AND p.result = 'reconciled' AND p.failed_results = 0
        -- least skips a null, which must not count: an unread time matches nothing.
        AND p.dispatched_at IS NOT NULL AND p.result_at IS NOT NULL
        AND least(p.dispatched_at, p.read_by) > l.raised_at
        AND least(p.result_at, p.read_by) <= l.end_at
    GROUP BY l.session_key, l.root, l.fork_id
)
SELECT
    l.session_key,
    l.root,
    l.fork_id,
    l.raised_by,
    l.raised_at,
    CASE WHEN l.close_kind IS NOT NULL THEN l.end_at END AS closed_at,
    l.close_kind,
    l.close_kind IS NULL AS censored,
    l.hours,
    CASE WHEN l.hours IS NOT NULL AND l.log_snapshot IS NOT NULL THEN coalesce(c.syncs, 0) END AS syncs,
    l.raised_by_sync,
    l.raise_source,
    CASE WHEN l.close_kind IS NULL THEN l.end_at END AS censored_at,
    l.close_kind IS NULL AND NOT l.open_latest AS vanished,
    l.title,
    l.repo,
    l.topic,
    l.snapshots,
    l.first_seen_at,
    l.first_run_id,
    l.end_run_id
FROM lived l
LEFT JOIN sync_counts c USING (session_key, root, fork_id);

-- Every series of every session, or of the sessions in session_keys only (each series whole:
-- a fork's lifetime depends on its own series alone).
CREATE OR REPLACE MACRO fork_lifetimes_for(run_ids) AS TABLE
SELECT * FROM fork_lifetimes_of(run_ids, NULL);

-- The forks of the point's sessions (those its crawl saw) over its history: the rows stats
-- counts for that point (queries/stats/point_forks.sql), so ad hoc SQL gets the same figures.
CREATE OR REPLACE MACRO fork_lifetimes_at(at_point) AS TABLE
SELECT * FROM fork_lifetimes_for((
    SELECT list(r.run_id)
    FROM run_points r
    JOIN points p USING (point)
    WHERE p.position <= (SELECT position FROM points WHERE point = at_point)
)) l
SEMI JOIN (
    SELECT DISTINCT o.session_key, o.root
    FROM observations o
    JOIN run_points r USING (run_id)
    WHERE r.point = at_point AND o."commit" IS NULL
) s USING (session_key, root);

CREATE OR REPLACE VIEW fork_lifetimes AS
SELECT * FROM fork_lifetimes_for(NULL);
