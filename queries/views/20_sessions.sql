-- The history findings of each checked point: its latest check's, since a re-check writes
-- them again. Rows from before findings carried their check count only where a check of
-- that era was the point's last (it found some, and no later check wrote any).
CREATE OR REPLACE VIEW point_series_findings AS
SELECT f.* EXCLUDE (check_id)
FROM series_findings f
JOIN points p ON p.point = f.point
WHERE f.check_id = p.check_id
    OR (f.check_id IS NULL AND p.check_series > 0 AND f.point NOT IN (
        SELECT point FROM series_findings WHERE check_id IS NOT NULL));

-- The sessions of each census point (docs/time-model.md): those whose working tree the point's
-- crawl saw, each at its latest observation in the point. A session seen only in old commits
-- (its folder deleted) is history, not part of the point, unless its history at the point
-- holds a finding along history: then it takes part in that point (only) at its last commit
-- of the point's runs, so the finding reaches the night's rates, verdicts and alarms.
CREATE OR REPLACE VIEW point_sessions AS
WITH gone AS (
    -- Series with a finding at a point and no working tree there, as its latest check judged
    -- them: a point whose verdicts an older census froze without such a session keeps them.
    SELECT DISTINCT f.point, f.session_key, f.root
    FROM point_series_findings f
    JOIN points p ON p.point = f.point
    WHERE NOT EXISTS (
            SELECT 1 FROM observations o JOIN run_points r ON r.run_id = o.run_id
            WHERE r.point = f.point AND o.session_key = f.session_key AND o.root = f.root
                AND o."commit" IS NULL)
        AND (NOT EXISTS (
                SELECT 1 FROM session_verdicts v
                WHERE v.point = f.point AND v.check_id = p.check_id)
            OR EXISTS (
                SELECT 1 FROM session_verdicts v
                WHERE v.point = f.point AND v.check_id = p.check_id
                    AND v.session_key = f.session_key AND v.root = f.root))
),
commits AS (
    SELECT o.*, r.point, r.started_at
    FROM gone g
    JOIN observations o ON o.session_key = g.session_key AND o.root = g.root
    JOIN run_points r ON r.run_id = o.run_id AND r.point = g.point
    WHERE o."commit" IS NOT NULL
),
last_commits AS (
    -- Its last commit of the point's runs: one no other of them descends from (by ancestry;
    -- of two branches' heads, the later dated), its research folder when it holds both.
    SELECT c.*
    FROM commits c
    WHERE NOT EXISTS (
        SELECT 1 FROM commits d
        WHERE d.session_key = c.session_key AND d.root = c.root AND d.point = c.point
            AND list_contains(d.parents, c."commit"))
    QUALIFY row_number() OVER (
        PARTITION BY session_key, root, point
        ORDER BY observed_at DESC, "commit" DESC, location = 'research' DESC, repo_path, path,
            snapshot_id) = 1
),
nodes AS (
    SELECT point, position, session_key, root, repo, repo_path, path, topic, location,
        snapshot_id, run_id, observed_at
    FROM working_nodes
    UNION ALL
    SELECT c.point, p.position, c.session_key, c.root, c.repo, c.repo_path, c.path, c.topic,
        c.location, c.snapshot_id, c.run_id, c.observed_at
    FROM last_commits c
    JOIN points p ON p.point = c.point
)
SELECT n.point, n.position, n.session_key, n.root, n.repo, n.repo_path, n.path, n.topic,
    n.location, n.snapshot_id, n.run_id, n.observed_at, s.stage, own_gate(s.stage) AS gate
FROM nodes n
JOIN snapshots s ON s.snapshot_id = n.snapshot_id;

-- rule_results at each rule's own gate: one status per snapshot and rule (its rows at later gates
-- repeat it, gates being cumulative). Rows checked before rule_results had a row per gate have
-- no rule_gate, and only the rule's own gate.
CREATE OR REPLACE VIEW own_gate_results AS
SELECT * EXCLUDE (rule_gate) FROM rule_results WHERE rule_gate IS NULL OR gate = rule_gate;

-- One status per census point, session and rule: the rule's result on the session's snapshot
-- (under the rule set the point was checked with), failed when the rule also found something
-- along the session's history at that point. `own`: the rule is evaluated at the session's
-- own gate (its stage's), which is what every rate counts. Checked points only.
CREATE OR REPLACE VIEW statuses AS
WITH results AS (
    -- own_gate_results has one row per snapshot, rule set and rule, and one more per finding
    -- of a failing rule: only fail and info rows can repeat, so only they are grouped.
    SELECT snapshot_id, ruleset, rule_id, gate, status, 0 AS findings
    FROM own_gate_results
    WHERE status IS NULL OR status NOT IN ('fail', 'info')  -- every row is in one branch
    UNION ALL
    SELECT snapshot_id, ruleset, rule_id, any_value(gate), any_value(status), count(*)
    FROM own_gate_results
    WHERE status IN ('fail', 'info')
    GROUP BY snapshot_id, ruleset, rule_id
),
series AS (
    SELECT point, session_key, root, rule_id, count(*) AS findings
    FROM point_series_findings
    GROUP BY point, session_key, root, rule_id
)
SELECT ps.point, ps.position, ps.session_key, ps.root, ps.repo, ps.repo_path, ps.path,
    ps.topic, ps.stage, ps.snapshot_id, r.rule_id, r.gate,
    CASE WHEN h.findings > 0 THEN 'fail' ELSE r.status END AS status,
    gate_includes(ps.gate, r.gate) AS own,
    r.findings + coalesce(h.findings, 0) AS findings
FROM point_sessions ps
JOIN points p ON p.point = ps.point AND p.checked
JOIN results r ON r.snapshot_id = ps.snapshot_id AND r.ruleset = p.ruleset
LEFT JOIN series h
    ON h.point = ps.point AND h.session_key = ps.session_key AND h.root = ps.root
    AND h.rule_id = r.rule_id;

-- One row per finding at the session's own gate (findings), or at a gate asked for, for every
-- session (findings_at('manifest'), as check --gate reads the rates), per checked census point:
-- what broke, where.
CREATE OR REPLACE MACRO findings_at(at_gate) AS TABLE
SELECT ps.point, ps.position, ps.session_key, ps.root, ps.repo, ps.repo_path, ps.path,
    ps.topic, ps.stage, ps.snapshot_id, r.rule_id, r.gate, r.status, r.file, r.line, r.message,
    'snapshot' AS source
FROM point_sessions ps
JOIN points p ON p.point = ps.point AND p.checked
JOIN own_gate_results r ON r.snapshot_id = ps.snapshot_id AND r.ruleset = p.ruleset
WHERE r.status IN ('fail', 'info') AND gate_includes(coalesce(at_gate, ps.gate), r.gate)
UNION ALL
SELECT ps.point, ps.position, ps.session_key, ps.root, ps.repo, ps.repo_path, ps.path,
    ps.topic, ps.stage, f.snapshot_id, f.rule_id, f.gate, 'fail', f.file, f.line, f.message,
    'history'
FROM point_series_findings f
JOIN point_sessions ps
    ON ps.point = f.point AND ps.session_key = f.session_key AND ps.root = f.root
WHERE gate_includes(coalesce(at_gate, ps.gate), f.gate);

CREATE OR REPLACE VIEW findings AS FROM findings_at(NULL);

-- The statuses tallied two ways in one pass: per point and rule, the sessions at whose own gate
-- the rule is evaluated, by status (what a rate counts: rule_counts_live); per point and
-- session, whether no rule fails at its own gate and how many do (its verdict:
-- session_verdicts_live). statuses has one row per point, session and rule, so a session's
-- count is a count of rules. check tallies a night's statuses once for both.
CREATE OR REPLACE VIEW status_tallies AS
SELECT point, rule_id, session_key, root,
    count(*) FILTER (WHERE own) AS own_sessions,
    count(*) FILTER (WHERE own AND is_evaluated(status)) AS evaluated,
    count(*) FILTER (WHERE own AND status = 'fail') AS failed,
    count(*) FILTER (WHERE own AND status = 'info') AS info,
    count(*) FILTER (WHERE own AND status = 'skipped') AS skipped,
    bool_and(status <> 'fail') FILTER (WHERE own) AS clean
FROM statuses
GROUP BY GROUPING SETS ((point, rule_id), (point, session_key, root));

-- A session's verdict at a checked census point, defined once: clean when no rule fails at its
-- own gate, and how many rules fail there. check freezes these verdicts with each point it
-- decides (the session_verdicts table); the sessions view reads them from there.
CREATE OR REPLACE VIEW session_verdicts_live AS
SELECT point, session_key, root, clean, failed AS failing_rules
FROM status_tallies
WHERE session_key IS NOT NULL;

-- The verdicts check froze with each point: those of the check that decided it with the rule
-- set it now has (as rule_counts_frozen).
CREATE OR REPLACE VIEW session_verdicts_frozen AS
SELECT f.point, f.session_key, f.root, f.clean, f.failing_rules
FROM session_verdicts f
JOIN points p ON p.point = f.point AND p.ruleset = f.ruleset
QUALIFY f.check_id = max(f.check_id) OVER (PARTITION BY f.point);

-- Checked points without frozen verdicts (checked by a census older than session_verdicts).
CREATE OR REPLACE VIEW points_judged_live AS
SELECT point, position
FROM points
WHERE checked AND point NOT IN (SELECT point FROM session_verdicts_frozen);

-- One row per census point and session: where it stands, and whether it is clean at its own
-- gate (null until the point is checked), as check froze it.
CREATE OR REPLACE VIEW sessions AS
WITH verdicts AS (
    SELECT * FROM session_verdicts_frozen
    UNION ALL
    SELECT * FROM session_verdicts_live
    WHERE point IN (SELECT point FROM points_judged_live)
),
harvests AS (
    -- The first time each series was seen in docs/history/ (its commit time with history),
    -- as known at each point: from the observations of that point and those before it, so a
    -- commit a later crawl first read never moves a checked point's value.
    SELECT session_key, root, position,
        min(min(o.observed_at)) OVER (PARTITION BY session_key, root ORDER BY position)
            AS harvested_at
    FROM observations o
    JOIN run_points r USING (run_id)
    JOIN points p USING (point)
    WHERE o.location = 'history'
    GROUP BY session_key, root, position
)
SELECT ps.point, ps.position, ps.session_key, ps.root, ps.repo, ps.repo_path, ps.path,
    ps.topic, ps.location, ps.stage, ps.gate, ps.snapshot_id, ps.run_id, ps.observed_at,
    s.status, s.started AS started_at,
    h.harvested_at,
    s.content_time, s.forks_open, s.forks_parked, s.ledger_entries, s.turns, s.syncs,
    v.clean, v.failing_rules
FROM point_sessions ps
JOIN snapshots s USING (snapshot_id)
LEFT JOIN verdicts v USING (point, session_key, root)
ASOF LEFT JOIN harvests h
    ON h.session_key = ps.session_key AND h.root = ps.root AND h.position <= ps.position;

-- Whether a session of one point (key_a under root_a, its key held twins_a times there) is a
-- session of another: the same session_key, under any roots where each point holds the key
-- once (a replay's arms crawl one layout under two roots; a night, under the same root), else
-- under the same root. The one matching of compare's arms, the report and stage flows.
CREATE OR REPLACE MACRO same_session(key_a, root_a, twins_a, key_b, root_b, twins_b) AS
    key_a = key_b AND (root_a = root_b OR (twins_a = 1 AND twins_b = 1));

-- How the sessions of an earlier point (`earlier`) are matched with a later one's (`later`)
-- (same_session). One row per earlier session: its root there (root_before) and the root it
-- is matched under at the later point (root).
CREATE OR REPLACE MACRO matched_roots(earlier, later) AS TABLE
WITH b AS (
    SELECT session_key, root, count(*) OVER (PARTITION BY session_key) AS twins
    FROM point_sessions WHERE point = earlier
),
n AS (
    SELECT session_key, root, count(*) OVER (PARTITION BY session_key) AS twins
    FROM point_sessions WHERE point = later
)
SELECT b.session_key, b.root AS root_before, coalesce(n.root, b.root) AS root
FROM b
LEFT JOIN n ON same_session(b.session_key, b.root, b.twins, n.session_key, n.root, n.twins);
