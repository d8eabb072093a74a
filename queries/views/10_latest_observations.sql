-- Each session's latest observation in each run (a git-history run observes a session once per commit).
CREATE OR REPLACE VIEW latest_observations AS
SELECT *
FROM observations
QUALIFY row_number() OVER (
    PARTITION BY run_id, session_key ORDER BY observed_at DESC, "commit" DESC NULLS FIRST
) = 1;
