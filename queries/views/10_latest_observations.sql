-- Each session's latest observation in each run (a git-history run observes a session once per commit).
CREATE OR REPLACE VIEW latest_observations AS
SELECT *
FROM observations
QUALIFY row_number() OVER (
    PARTITION BY run_id, session_key ORDER BY observed_at DESC, "commit" DESC NULLS FIRST
) = 1;

-- Each session's latest observation among the given runs (a VARCHAR[]): the set a statistic or
-- a comparison counts when several runs (shards of one crawl, every run with a label) are one.
CREATE OR REPLACE MACRO latest_in(run_ids) AS TABLE
SELECT *
FROM observations
WHERE list_contains(run_ids, run_id)
QUALIFY row_number() OVER (
    PARTITION BY session_key ORDER BY observed_at DESC, run_id DESC, "commit" DESC NULLS FIRST
) = 1;
