-- The forks of the sessions that the $population runs saw (the chosen census point's, or one
-- label's), over their history in the given runs ($runs: the runs of that point and every
-- earlier one, or of one label): one row per fork with its two durations (hours, syncs; null:
-- no lifetime), how it closed and who raised it. A fork still open (censored, not vanished)
-- also carries its key (session_key, root, fork_id), for the report's list of open forks
-- (queries/report/open_forks.sql). stats keeps this as the temp table point_forks, which
-- lifetimes_input.sql expands into Kaplan–Meier groups. check makes the same columns from
-- lifetime_forks.sql's rows (pipeline/check.py, _point_forks): a change here goes there too.
SELECT l.hours, l.syncs, l.close_kind, l.raised_by,
    CASE WHEN l.censored AND NOT l.vanished THEN l.session_key END AS open_session_key,
    CASE WHEN l.censored AND NOT l.vanished THEN l.root END AS open_root,
    CASE WHEN l.censored AND NOT l.vanished THEN l.fork_id END AS open_fork_id
FROM fork_lifetimes_for($runs) l
SEMI JOIN (
    SELECT DISTINCT session_key, root
    FROM observations
    WHERE list_contains($population, run_id) AND "commit" IS NULL
) p USING (session_key, root);
