-- Kaplan–Meier, in SQL (spec §7; docs/stats.md). The input is a relation named by `input`
-- with columns grp (VARCHAR: which curve), duration (DOUBLE; NULL = no lifetime: counted,
-- not estimated), event (BOOLEAN: it closed, this way), competing (BOOLEAN: it closed the
-- other way, censored at that close). z is the normal quantile of the pointwise band.
--
-- km_curve: the product-limit estimate at 0 and at every observed duration. At each time t,
-- S(t) = S(t-) · (1 − d/n), with n the forks at risk (duration ≥ t) and d the closes at t;
-- at equal times closes come before censorings. Greenwood's variance with the log-log band
-- exp(−exp(log(−log S) ± z·se)), se = sqrt(Σ d/(n(n−d))) / |log S|: lifelines'
-- confidence_interval_; except at the step where every fork still at risk closes (S falls
-- to 0, where Greenwood's band is [0, 0] and a median's interval would shrink to a point):
-- there the upper end is the exact bound for no survivor of Peto's effective sample size
-- m = n / S(t−) (the forks at the start, when none was censored): 1 − tail^(1/m)
-- (Clopper–Pearson; tail = 1 − Φ(z), the band's one-sided miss), and never above the
-- band before it. Likewise where no fork has closed yet (S = 1, where Greenwood's band is
-- [1, 1] and one fork's close would bound a median's lower end): the lower end is the exact
-- bound for every one of the n forks at risk after t surviving, tail^(1/n), so a median
-- from a handful of forks may lie anywhere from t on.
CREATE OR REPLACE MACRO km_curve(input, z, tail) AS TABLE
WITH obs AS (
    SELECT grp, CAST(duration AS DOUBLE) AS t, event
    FROM query_table(input)
    WHERE duration IS NOT NULL
),
steps AS (
    SELECT grp, t,
        count(*) FILTER (WHERE event) AS events,
        count(*) FILTER (WHERE NOT event) AS censored
    FROM (SELECT * FROM obs UNION ALL SELECT DISTINCT grp, 0.0, NULL FROM obs)
    GROUP BY grp, t
),
risk AS (
    SELECT *,
        sum(events + censored) OVER (
            PARTITION BY grp ORDER BY t DESC ROWS UNBOUNDED PRECEDING) AS at_risk
    FROM steps
),
product AS (
    SELECT *,
        sum(CASE WHEN events > 0 AND events = at_risk THEN 1 ELSE 0 END) OVER w AS emptied,
        coalesce(sum(CASE WHEN events > 0 AND events < at_risk
            THEN ln(1 - events / at_risk) END) OVER w, 0.0) AS log_survival,
        sum(CASE WHEN events > 0 AND at_risk > events
            THEN events / (at_risk * (at_risk - events)) ELSE 0.0 END) OVER w AS greenwood
    FROM risk
    WINDOW w AS (PARTITION BY grp ORDER BY t ROWS UNBOUNDED PRECEDING)
)
SELECT grp, time, at_risk, events, censored, survival,
    CASE WHEN survival >= 1 AND at_risk > events + censored
        THEN pow(tail, 1.0 / (at_risk - events - censored))
        ELSE lower END AS lower,
    -- Before the first row (every fork closing at 0 h) the curve and its band stand at 1.
    CASE WHEN survival <= 0 AND events = at_risk
        THEN least(coalesce(lag(upper) OVER w, 1.0),
            1 - pow(tail, coalesce(lag(survival) OVER w, 1.0) / at_risk))
        ELSE upper END AS upper
FROM (
    SELECT grp, t AS time, CAST(at_risk AS BIGINT) AS at_risk, events, censored,
        survival,
        CASE WHEN survival >= 1 THEN 1.0 WHEN survival <= 0 THEN 0.0
            ELSE exp(-exp(ln(-ln(survival)) + z * sqrt(greenwood) / abs(ln(survival)))) END
            AS lower,
        CASE WHEN survival >= 1 THEN 1.0 WHEN survival <= 0 THEN 0.0
            ELSE exp(-exp(ln(-ln(survival)) - z * sqrt(greenwood) / abs(ln(survival)))) END
            AS upper
    FROM (
        SELECT *, CASE WHEN emptied > 0 THEN 0.0 ELSE exp(log_survival) END AS survival
        FROM product
    )
)
WINDOW w AS (PARTITION BY grp ORDER BY time);

-- km_summary: one row per grp: the counts; the median with its 95% interval (the first times
-- the curve, and its lower and upper band, drop to 0.5 or below: lifelines'
-- median_survival_times of the band, i.e. Brookmeyer–Crowley, but for km_curve's exact
-- upper end where the curve falls to 0); the quartiles (S ≤ 0.75,
-- 0.25); S at 24, 168 and 720 hours (null beyond the longest duration unless S reached 0).
-- A quantile that is never reached is null ("not reached"). S is compared with q allowing
-- 1e-9 of rounding, so a curve that steps to exactly 0.5 reaches it.
-- km_summary_of(input, curve) reads the curve from a relation holding km_curve's rows of
-- the same input, so a caller that needs the curve too computes it once.
CREATE OR REPLACE MACRO km_summary_of(input, curve) AS TABLE
WITH counts AS (
    SELECT grp,
        count(*) AS forks,
        count(duration) AS estimated,
        count(*) FILTER (WHERE duration IS NOT NULL AND event) AS closes,
        count(*) FILTER (WHERE duration IS NOT NULL AND NOT event AND competing) AS competing,
        count(*) FILTER (WHERE duration IS NOT NULL AND NOT event AND NOT competing) AS censored,
        count(*) FILTER (WHERE duration IS NULL) AS unknown
    FROM query_table(input)
    GROUP BY grp
),
reach AS (
    SELECT grp,
        min(time) FILTER (WHERE survival <= 0.5 + 1e-9) AS median,
        min(time) FILTER (WHERE lower <= 0.5 + 1e-9) AS median_lower,
        min(time) FILTER (WHERE upper <= 0.5 + 1e-9) AS median_upper,
        min(time) FILTER (WHERE survival <= 0.75 + 1e-9) AS p25,
        min(time) FILTER (WHERE survival <= 0.25 + 1e-9) AS p75,
        max(time) AS longest,
        arg_max(survival, time) AS last_survival,
        arg_max(survival, time) FILTER (WHERE time <= 24) AS s_1d,
        arg_max(survival, time) FILTER (WHERE time <= 168) AS s_7d,
        arg_max(survival, time) FILTER (WHERE time <= 720) AS s_30d
    FROM query_table(curve)
    GROUP BY grp
)
SELECT c.grp, c.forks, c.estimated, c.closes, c.censored, c.competing, c.unknown,
    r.median, r.median_lower, r.median_upper, r.p25, r.p75,
    CASE WHEN 24 <= r.longest OR r.last_survival <= 0 THEN r.s_1d END AS open_1d,
    CASE WHEN 168 <= r.longest OR r.last_survival <= 0 THEN r.s_7d END AS open_7d,
    CASE WHEN 720 <= r.longest OR r.last_survival <= 0 THEN r.s_30d END AS open_30d
FROM counts c
LEFT JOIN reach r USING (grp);

CREATE OR REPLACE MACRO km_summary(input, z, tail) AS TABLE
WITH km_summary_curve AS (SELECT * FROM km_curve(input, z, tail))
FROM km_summary_of(input, 'km_summary_curve');
