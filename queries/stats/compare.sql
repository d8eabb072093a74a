-- A baseline census point ($baseline) against a candidate ($candidate), per rule and for the
-- share of sessions clean at their own gate: each arm's failed/evaluated exactly as
-- rule_rates counts them (the sessions at whose own gate the rule is evaluated, skipped
-- left out), the sessions matched as the report matches points (same_session), and the 2×2
-- counts of the matched pairs.
-- A metric is paired when both arms evaluate it on exactly the same sessions (the replay
-- design), else two-sample. Intervals are Newcombe's, at normal quantile $z.
WITH arms AS (
    SELECT * FROM (VALUES ($baseline, false), ($candidate, true)) v(point, cand)
),
arm_hits AS (
    -- One row per arm, session and metric: whether it failed (for the clean share: whether
    -- it was clean). A session is (session_key, root), as statuses and rule_rates count it.
    -- (A point compared with itself is both arms.)
    SELECT a.cand, session_key, root, rule_id AS metric, bool_or(status = 'fail') AS hit
    FROM statuses JOIN arms a USING (point)
    WHERE own AND is_evaluated(status)
    GROUP BY ALL
    UNION ALL
    SELECT a.cand, session_key, root, 'clean-share', bool_and(clean)
    FROM sessions JOIN arms a USING (point)
    WHERE clean IS NOT NULL
    GROUP BY ALL
),
keyed AS (
    -- twins: how many sessions of its arm's point hold the key (as matched_roots counts).
    SELECT h.*, t.twins
    FROM arm_hits h
    JOIN (
        SELECT a.cand, session_key, root, count(*) OVER (PARTITION BY a.cand, session_key) AS twins
        FROM point_sessions JOIN arms a USING (point)
    ) t USING (cand, session_key, root)
),
hits AS (
    -- The arms' sessions matched as the report matches two points (same_session); one
    -- unmatched counts on its own (null: not evaluated in the other arm).
    SELECT coalesce(b.metric, c.metric) AS metric,
        coalesce(b.session_key, c.session_key) AS session_key,
        b.hit AS b_hit, c.hit AS c_hit
    FROM (FROM keyed WHERE NOT cand) b
    FULL JOIN (FROM keyed WHERE cand) c
        ON c.metric = b.metric
        AND same_session(b.session_key, b.root, b.twins, c.session_key, c.root, c.twins)
),
metrics AS (
    SELECT rule_id AS metric, gate FROM rules
    UNION ALL
    SELECT 'clean-share', 'own'
),
skips AS (
    -- Each arm's skipped count beside its rate (spec §7), as rule_rates counts it; for the
    -- clean share, the sessions with no verdict at their own gate.
    SELECT a.cand, rule_id AS metric, skipped FROM rule_rates JOIN arms a USING (point)
    UNION ALL
    SELECT cand, 'clean-share', count(*) FILTER (WHERE judged IS NULL)
    FROM (
        SELECT a.cand, session_key, root, bool_and(clean) AS judged
        FROM sessions JOIN arms a USING (point)
        GROUP BY ALL
    )
    GROUP BY cand
),
counts AS (
    SELECT metric,
        count(b_hit) AS n_baseline,
        count(*) FILTER (WHERE b_hit) AS f_baseline,
        count(c_hit) AS n_candidate,
        count(*) FILTER (WHERE c_hit) AS f_candidate,
        count(*) FILTER (WHERE b_hit IS NULL OR c_hit IS NULL) AS unmatched,
        count(*) FILTER (WHERE b_hit AND c_hit) AS both_hit,
        count(*) FILTER (WHERE b_hit AND NOT c_hit) AS only_baseline,
        count(*) FILTER (WHERE c_hit AND NOT b_hit) AS only_candidate,
        count(*) FILTER (WHERE NOT b_hit AND NOT c_hit) AS neither
    FROM hits
    GROUP BY metric
),
joined AS (
    SELECT m.metric, m.gate,
        coalesce(k.n_baseline, 0) AS n_baseline, coalesce(k.f_baseline, 0) AS f_baseline,
        coalesce(k.n_candidate, 0) AS n_candidate, coalesce(k.f_candidate, 0) AS f_candidate,
        coalesce(k.unmatched, 0) = 0 AND coalesce(k.n_baseline, 0) > 0 AS paired,
        k.both_hit, k.only_baseline, k.only_candidate, k.neither,
        coalesce(sb.skipped, 0) AS s_baseline, coalesce(sc.skipped, 0) AS s_candidate
    FROM metrics m
    LEFT JOIN counts k USING (metric)
    LEFT JOIN (FROM skips WHERE NOT cand) sb USING (metric)
    LEFT JOIN (FROM skips WHERE cand) sc USING (metric)
)
SELECT metric, gate, paired, n_baseline, f_baseline, n_candidate, f_candidate,
    s_baseline, s_candidate,
    f_baseline / nullif(n_baseline, 0) AS baseline,
    f_candidate / nullif(n_candidate, 0) AS candidate,
    f_candidate / nullif(n_candidate, 0) - f_baseline / nullif(n_baseline, 0) AS difference,
    CASE WHEN n_baseline = 0 OR n_candidate = 0 THEN NULL
        WHEN paired THEN newcombe_paired_lo(both_hit, only_baseline, only_candidate, neither, $z)
        ELSE newcombe_lo(f_baseline, n_baseline, f_candidate, n_candidate, $z) END AS lower,
    CASE WHEN n_baseline = 0 OR n_candidate = 0 THEN NULL
        WHEN paired THEN newcombe_paired_hi(both_hit, only_baseline, only_candidate, neither, $z)
        ELSE newcombe_hi(f_baseline, n_baseline, f_candidate, n_candidate, $z) END AS upper,
    coalesce(only_baseline, 0) AS only_baseline, coalesce(only_candidate, 0) AS only_candidate
FROM joined
ORDER BY metric = 'clean-share', metric;
