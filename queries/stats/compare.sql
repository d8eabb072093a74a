-- A baseline census point ($baseline) against a candidate ($candidate), per rule and for the
-- share of sessions clean at their own gate: each arm's failed/evaluated exactly as
-- rule_rates counts them (the sessions at whose own gate the rule is evaluated, skipped
-- left out), the sessions matched by session_key, and the 2×2 counts of the matched pairs.
-- A metric is paired when both arms evaluate it on exactly the same sessions (the replay
-- design), else two-sample. Intervals are Newcombe's, at normal quantile $z.
WITH arms AS (
    SELECT point, session_key, rule_id AS metric, any_value(gate) AS gate,
        bool_or(status = 'fail') AS hit
    FROM statuses
    WHERE point IN ($baseline, $candidate) AND own AND is_evaluated(status)
    GROUP BY point, session_key, rule_id
    UNION ALL
    -- The clean share's event is being clean.
    SELECT point, session_key, 'clean-share', 'own', bool_and(clean)
    FROM sessions
    WHERE point IN ($baseline, $candidate) AND clean IS NOT NULL
    GROUP BY point, session_key
),
base AS (SELECT * FROM arms WHERE point = $baseline),
cand AS (SELECT * FROM arms WHERE point = $candidate),
metrics AS (
    SELECT rule_id AS metric, gate FROM rules
    UNION ALL
    SELECT 'clean-share', 'own'
),
counts AS (
    SELECT coalesce(b.metric, c.metric) AS metric,
        count(b.session_key) AS n_baseline,
        count(*) FILTER (WHERE b.hit) AS f_baseline,
        count(c.session_key) AS n_candidate,
        count(*) FILTER (WHERE c.hit) AS f_candidate,
        count(*) FILTER (WHERE b.session_key IS NULL OR c.session_key IS NULL) AS unmatched,
        count(*) FILTER (WHERE b.hit AND c.hit) AS both_hit,
        count(*) FILTER (WHERE b.hit AND NOT c.hit) AS only_baseline,
        count(*) FILTER (WHERE c.hit AND NOT b.hit) AS only_candidate,
        count(*) FILTER (WHERE NOT b.hit AND NOT c.hit) AS neither
    FROM base b
    FULL JOIN cand c USING (session_key, metric)
    GROUP BY 1
),
joined AS (
    SELECT m.metric, m.gate,
        coalesce(k.n_baseline, 0) AS n_baseline, coalesce(k.f_baseline, 0) AS f_baseline,
        coalesce(k.n_candidate, 0) AS n_candidate, coalesce(k.f_candidate, 0) AS f_candidate,
        coalesce(k.unmatched, 0) = 0 AND coalesce(k.n_baseline, 0) > 0 AS paired,
        k.both_hit, k.only_baseline, k.only_candidate, k.neither
    FROM metrics m
    LEFT JOIN counts k USING (metric)
)
SELECT metric, gate, paired, n_baseline, f_baseline, n_candidate, f_candidate,
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
