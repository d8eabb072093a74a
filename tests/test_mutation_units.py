"""Pure, fast tests of pipeline/check.py, pipeline/stats.py and pipeline/compare.py: the
selection mutmut runs per mutant (docs/testing.md), so it builds no OUT and takes seconds.

Every expected value is worked out by hand in the test: verdicts and median verdicts at their
boundaries (an interval touching zero is no verdict), McNemar's exact p-values, the order of
compare's rows, how rows become records, how lifetime groups are split and named, and how
times become JSON. tests/test_mutation_targets.py covers the same modules end to end on a
tiny OUT; tests/test_numbers.py pins the numbers themselves.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from pipeline import check as check_module
from pipeline.compare import (
    CLEAN,
    MEDIAN,
    Arm,
    Comparison,
    Row,
    band_median,
    mcnemar_exact,
    median_interval,
    median_row,
    ordered,
    verdict,
)
from pipeline.engine import connect
from pipeline.select import Point
from pipeline.stats import (
    CLOSE_KINDS,
    OPEN_AT_HOURS,
    CurvePoint,
    Lifetime,
    RuleRate,
    _lifetimes,
    _plain,
    _SummaryRow,
    history_runs,
    no_forks,
    query_sql,
    records,
)
from pipeline.vocabulary import Z95

WHEN = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


def test_check_stamps_utc_now() -> None:
    before = datetime.now(UTC)
    now = check_module._now()
    assert now.tzinfo is not None and before <= now <= datetime.now(UTC)


def test_plain_turns_times_into_utc_z_and_keeps_the_rest() -> None:
    plus2 = timezone(timedelta(hours=2))
    value = {
        "at": datetime(2026, 7, 1, 14, 0, tzinfo=plus2),
        "list": (1, None, "x"),
        3: [{"nested": WHEN}],
    }
    assert _plain(value) == {
        "at": "2026-07-01T12:00:00Z",
        "list": [1, None, "x"],
        "3": [{"nested": "2026-07-01T12:00:00Z"}],
    }


def test_query_sql_is_one_statement_without_its_semicolon() -> None:
    text = query_sql("stages")
    assert text.startswith("-- Sessions by stage") and not text.endswith(";")
    assert text == text.strip()


def test_records_match_columns_to_fields_by_name() -> None:
    con = connect(None)
    query = (
        "SELECT 0.5::DOUBLE AS rate_hi, 'R' AS rule_id, 'move' AS gate, 4 AS evaluated, "
        "2 AS failed, 0 AS info, 1 AS skipped, 0.5::DOUBLE AS rate, 0.1::DOUBLE AS rate_lo, "
        "'ignored' AS extra "
        "WHERE $keep"
    )
    found = records(con, RuleRate, query, {"keep": True})
    assert found == [RuleRate("R", "move", 4, 2, 0, 1, 0.5, 0.1, 0.5)]
    assert records(con, RuleRate, query, {"keep": False}) == []


def test_history_runs_and_labels() -> None:
    first = Point("p1", 1, WHEN, ("r1", "r2"), {"run": "a", "shard": "1-of-2"})
    second = Point("p2", 2, WHEN, ("r3",), {"run": "b"})
    third = Point("p3", 3, WHEN, ("r4",), {"run": "a"})
    runs, labels = history_runs([first, second, third])
    assert runs == ["r1", "r2", "r3", "r4"]
    assert labels == {"run=a": ["r1", "r2", "r4"], "run=b": ["r3"], "shard=1-of-2": ["r1", "r2"]}
    assert list(labels) == sorted(labels)


def test_lifetimes_split_groups_by_prefix() -> None:
    one, two, three = Lifetime(forks=1), Lifetime(forks=2), Lifetime(forks=3)
    groups = {
        "overall": one,
        "close_kind:parked": two,
        "raised_by:twin": three,
        "raised_by:user": one,
        "label:run=a": two,
        "label:night=2026-11-29T02:00": three,
    }
    result = _lifetimes("hours", groups)
    assert result.unit == "hours" and result.overall is one
    assert result.by_close_kind == {"resolved": no_forks("hours"), "parked": two}
    assert no_forks("hours").open_at == {"1d": None, "7d": None, "30d": None}
    assert list(result.by_close_kind) == list(CLOSE_KINDS)
    assert result.by_raised_by == {"twin": three, "user": one}
    assert result.by_label == {"night=2026-11-29T02:00": three, "run=a": two}
    assert [name for name, _ in result.groups()] == [
        "all forks",
        "closed: resolved",
        "closed: parked",
        "raised by: twin",
        "raised by: user",
        "label night=2026-11-29T02:00",
        "label run=a",
    ]
    assert _lifetimes("syncs", {}).overall == Lifetime()


def test_mcnemar_exact_by_hand() -> None:
    # 2 · (C(5,0) + C(5,1)) / 2^5 = 12/32; 0 vs 3: 2 · 1/8; at most 1.
    assert mcnemar_exact(1, 4) == pytest.approx(12 / 32)
    assert mcnemar_exact(4, 1) == pytest.approx(12 / 32)
    assert mcnemar_exact(0, 3) == pytest.approx(2 / 8)
    assert mcnemar_exact(2, 2) == 1.0 and mcnemar_exact(0, 0) == 1.0


def row(lower: float | None, upper: float | None, difference: float | None, worse: str) -> Row:
    return Row("R", "session", "paired", Arm(1, 10, 0.1), Arm(2, 10, 0.2), difference, lower,
               upper, worse_when=worse)  # fmt: skip


def test_verdict_at_its_boundaries() -> None:
    assert verdict(row(0.01, 0.2, 0.1, "higher")) == "regression"
    assert verdict(row(-0.2, -0.01, -0.1, "higher")) == "improvement"
    assert verdict(row(0.01, 0.2, 0.1, "lower")) == "improvement"
    assert verdict(row(-0.2, -0.01, -0.1, "lower")) == "regression"
    assert verdict(row(0.0, 0.2, 0.1, "higher")) == "unchanged", "an interval touching 0"
    assert verdict(row(-0.2, 0.0, -0.1, "higher")) == "unchanged"
    assert verdict(row(None, 0.2, 0.1, "higher")) == "unchanged", "unbounded below"
    # An unbounded side (a median never reached) excludes nothing; the bounded side decides.
    assert verdict(row(0.1, None, 0.1, "higher")) == "regression"
    assert verdict(row(None, -0.1, None, "higher")) == "improvement"
    assert verdict(row(None, None, None, "higher")) == "unchanged"
    assert verdict(row(0.1, 0.2, None, "higher")) == "regression", "the interval, not the sign"
    empty = row(0.1, 0.2, 0.1, "higher")
    empty.baseline = Arm(0, 0, None)
    assert verdict(empty) == "no sessions"
    empty = row(0.1, 0.2, 0.1, "higher")
    empty.candidate = Arm(0, 0, None)
    assert verdict(empty) == "no sessions"


def lifetime(median: float | None, lower: float | None, upper: float | None) -> Lifetime:
    return Lifetime(forks=5, estimated=4, closes=3, median=median, median_lower=lower,
                    median_upper=upper)  # fmt: skip


def test_median_row_at_its_boundaries() -> None:
    # MOVER at 95% (z = Z95, no rescaling): d = 15 − 10 = 5, lower = d − hypot(15 − 11.5, 13 − 10)
    # = 5 − 4.61 > 0; upper = d + hypot(20 − 15, 10 − 7) = 5 + sqrt(34).
    base = lifetime(10.0, 7.0, 13.0)
    worse = median_row(base, lifetime(15.0, 11.5, 20.0))
    assert (worse.metric, worse.gate, worse.design, worse.verdict) == (
        MEDIAN,
        "own",
        "medians",
        "regression",
    )
    assert worse.difference == 5.0
    assert worse.lower == pytest.approx(5 - (3.5**2 + 3**2) ** 0.5)
    assert worse.upper == pytest.approx(5 + 34**0.5)
    assert (worse.baseline.count, worse.baseline.evaluated, worse.baseline.value) == (3, 4, 10.0)
    cand = worse.candidate
    assert (cand.count, cand.evaluated, cand.value) == (3, 4, 15.0)
    # hypot(15 − 11, 13 − 10) = 5 = d: the interval touches zero.
    assert median_row(base, lifetime(15.0, 11.0, 20.0)).lower == 0.0
    assert median_row(base, lifetime(15.0, 11.0, 20.0)).verdict == "unchanged", "touching"
    # Overlapping arm intervals (12 < 13) still differ: 5 − hypot(3, 3) > 0. The difference's
    # test, not the arms' overlap (which would call it unchanged).
    assert median_row(base, lifetime(15.0, 12.0, 20.0)).verdict == "regression"
    # d = −5, upper = −5 + hypot(6 − 5, 10 − 7) < 0; with (5, 1, 9): −5 + hypot(4, 3) = 0.
    assert median_row(base, lifetime(5.0, 2.0, 6.0)).verdict == "improvement"
    assert median_row(base, lifetime(5.0, 1.0, 9.0)).upper == 0.0
    assert median_row(base, lifetime(5.0, 1.0, 9.0)).verdict == "unchanged", "touching"
    # A candidate median never reached: no difference; at least 13.5 − 13 hours longer.
    unreached = median_row(base, lifetime(None, 13.5, None))
    assert (unreached.difference, unreached.upper, unreached.verdict) == (None, None, "regression")
    assert unreached.lower == pytest.approx(0.5)
    assert median_row(base, lifetime(None, 13.0, None)).verdict == "unchanged", "touching"
    # A baseline never reached: the candidate's upper 6 below its lower 8.
    improved = median_row(lifetime(None, 8.0, None), lifetime(5.0, 2.0, 6.0))
    assert (improved.lower, improved.upper, improved.verdict) == (None, -2.0, "improvement")
    # The baseline's upper end not reached leaves the difference unbounded below.
    open_base = median_row(lifetime(10.0, 8.0, None), lifetime(20.0, 12.5, 30.0))
    assert open_base.lower is None and open_base.verdict == "unchanged"
    assert open_base.upper == pytest.approx(10 + (10**2 + 2**2) ** 0.5)
    assert median_row(Lifetime(), base).verdict == "no forks"
    assert median_row(base, Lifetime()).verdict == "no forks"


def stored_curve(steps: list[tuple[float, float, float]]) -> tuple[CurvePoint, ...]:
    """(time, S, se) as km_curve stores them: the log-log band at Z95 around S."""
    import math

    def band(survival: float, shift: float) -> float:
        if survival in (0.0, 1.0):
            return survival
        return math.exp(-math.exp(math.log(-math.log(survival)) + shift))

    # A hundred forks at risk: enough that the exact bound before the first close (S = 1)
    # stays above 0.5 at every level these tests widen to.
    return tuple(
        CurvePoint(t, 100, 1, 0, s_, band(s_, Z95 * se), band(s_, -Z95 * se)) for t, s_, se in steps
    )


# By hand, c = log(−log S): at t=1 (S 0.8, se 0.3) c + 1.96·0.3 gives a lower band of 0.669,
# c + 2·1.96·0.3 one of 0.485; at t=2 (0.55, 0.2) the lower band is 0.413; the upper band at
# t=4 (0.3, 0.25) is 0.478 at Z95 and 0.636 at 2·Z95, at t=5 (0.1, 0.3) 0.492 at 2·Z95.
CURVE = stored_curve([(0, 1.0, 0), (1, 0.8, 0.3), (2, 0.55, 0.2), (3, 0.45, 0.2), (4, 0.3, 0.25),
                      (5, 0.1, 0.3)])  # fmt: skip


def test_the_median_interval_is_widened_along_the_stored_band() -> None:
    assert band_median(CURVE, Z95) == (2, 4), "the 95% interval km_summary gives"
    assert band_median(CURVE, 2 * Z95) == (1, 5)
    assert band_median(CURVE, 9 * Z95)[1] is None, "an upper end never reached"
    arm = Lifetime(forks=6, estimated=6, closes=5, median=3, median_lower=2, median_upper=4,
                   curve=CURVE)  # fmt: skip
    assert median_interval(arm, Z95) == (2, 4)
    assert median_interval(arm, 2 * Z95) == (1, 5)
    # Both arms so at the family level: d = 0 ± hypot(3 − 1, 5 − 3).
    wide = median_row(arm, arm, 2 * Z95)
    assert (wide.difference, wide.verdict) == (0, "unchanged")
    assert (wide.lower, wide.upper) == (pytest.approx(-(8**0.5)), pytest.approx(8**0.5))
    # Without a curve to widen, the summary's own ends.
    assert median_interval(lifetime(3.0, 2.0, 4.0), 2 * Z95) == (2.0, 4.0)


def test_rows_are_ordered_by_verdict_metric_and_gate() -> None:
    def made(metric: str, gate: str, verdict_: str) -> Row:
        made_row = row(0.1, 0.2, 0.1, "higher")
        made_row.metric, made_row.gate, made_row.verdict = metric, gate, verdict_
        return made_row

    rows = [
        made("B", "move", "unchanged"),
        made("A", "own", "no sessions"),
        made("B", "session", "unchanged"),
        made("Z", "move", "regression"),
        made("A", "manifest", "improvement"),
        made("A", "own", "unchanged"),
        made("C", "session", "improvement"),
    ]
    got = [(r.metric, r.gate, r.verdict) for r in ordered(rows)]
    assert got == [
        ("Z", "move", "regression"),
        ("A", "manifest", "improvement"),
        ("C", "session", "improvement"),
        ("A", "own", "unchanged"),
        ("B", "session", "unchanged"),
        ("B", "move", "unchanged"),
        ("A", "own", "no sessions"),
    ]


def test_comparison_lists_regressions() -> None:
    point = Point("p", 1, WHEN, ("r",))
    bad, fine = row(0.1, 0.2, 0.1, "higher"), row(-0.1, 0.2, 0.1, "higher")
    bad.verdict = "regression"
    comparison = Comparison(point, point, 21, 0.99, [bad, fine])
    assert comparison.regressions == [bad]
    assert comparison.counts()["regression"] == 1


def test_summary_row_becomes_a_lifetime_with_shares_in_hours_only() -> None:
    summary = _SummaryRow("overall", 9, 7, 5, 2, 1, 2, 30.0, 20.0, 40.0, 10.0, 50.0, 0.9, 0.4, 0.1)
    hours = summary.lifetime((), "hours")
    assert hours == Lifetime(9, 7, 5, 2, 1, 2, 30.0, 20.0, 40.0, 10.0, 50.0,
                             {"1d": 0.9, "7d": 0.4, "30d": 0.1}, ())  # fmt: skip
    assert summary.lifetime((), "syncs").open_at == {}
    curve = (CurvePoint(0.0, 9, 0, 0, 1.0, 1.0, 1.0),)
    assert summary.lifetime(curve, "hours").curve == curve
    assert OPEN_AT_HOURS == {"1d": 24.0, "7d": 168.0, "30d": 720.0}


def test_comparison_as_json_has_stable_keys_and_ordered_rows() -> None:
    base = Point("b", 1, WHEN, ("r1",), {"run": "baseline"})
    cand = Point("c", 2, WHEN, ("r2", "r3"), {"run": "candidate"})
    good, bad = row(-0.3, -0.1, -0.2, "higher"), row(0.1, 0.3, 0.2, "higher")
    good.metric, good.verdict, bad.metric, bad.verdict = "A", "improvement", "B", "regression"
    clean = row(-0.1, 0.1, 0.0, "lower")
    clean.metric, clean.gate = CLEAN, "own"
    plain = Comparison(base, cand, 21, 0.9976, [good, clean, bad]).as_json()
    assert plain["baseline"] == {"point": "b", "labels": {"run": "baseline"}, "runs": ["r1"]}
    assert plain["candidate"] == {
        "point": "c",
        "labels": {"run": "candidate"},
        "runs": ["r2", "r3"],
    }
    assert (plain["family_size"], plain["confidence"]) == (21, 0.9976)
    assert plain["counts"] == {
        "regression": 1,
        "improvement": 1,
        "unchanged": 1,
        "no sessions": 0,
        "no forks": 0,
        "skipped everywhere": 0,
    }
    assert [r["metric"] for r in plain["rows"]] == ["B", "A", CLEAN]
    assert plain["rows"][0]["baseline"] == {
        "count": 1,
        "evaluated": 10,
        "value": 0.1,
        "skipped": 0,
    }
    assert MEDIAN == "fork-median-hours"


def test_points_and_unevaluated_on_an_empty_out() -> None:
    con = connect(None)
    assert check_module._points(con) == []
    assert check_module._unevaluated(con, ["p"], "rs") == []


def test_points_and_unevaluated_read_their_columns() -> None:
    import duckdb

    con = duckdb.connect()
    con.execute(
        "CREATE TABLE points AS SELECT * FROM (VALUES ('n2', 2, false), ('n1', 1, true)) "
        "t(point, position, checked)"
    )
    assert check_module._points(con) == [("n1", True), ("n2", False)]
    con.execute(
        "CREATE TABLE observations AS SELECT * FROM (VALUES ('s1', 'r1'), ('s2', 'r1'), "
        "('s3', 'r2')) t(snapshot_id, run_id)"
    )
    con.execute(
        "CREATE TABLE run_points AS SELECT * FROM (VALUES ('r1', 'n1'), ('r2', 'n2')) "
        "t(run_id, point)"
    )
    con.execute(
        "CREATE TABLE rule_results AS SELECT * FROM (VALUES ('s1', 'rs'), ('s2', 'old')) "
        "t(snapshot_id, ruleset)"
    )
    assert check_module._unevaluated(con, ["n1"], "rs") == ["s2"]
    assert check_module._unevaluated(con, ["n1", "n2"], "rs") == ["s2", "s3"]


def test_plain_is_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "JST-9")  # POSIX form: no tzdata needed
    time.tzset()
    try:
        assert _plain(datetime(2026, 7, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))) == (
            "2026-07-01T12:00:00Z"
        )
    finally:
        monkeypatch.undo()
        time.tzset()


def test_an_alarm_names_a_median_never_reached_as_compare_does() -> None:
    """The alarm line showed a candidate median the curve never reaches as '–'; compare and the
    report say 'not reached' (spec §7: shown as 'not reached', never as a number)."""
    from pipeline.alarms import AlarmReport

    when = datetime(2026, 12, 3, tzinfo=UTC)
    night1, night2 = Point("night-1", 1, when, ("r1",)), Point("night-2", 2, when, ("r2",))
    regressed = Row(MEDIAN, "own", "two-sample", Arm(10, 10, 5.0), Arm(0, 10, None), None,
                    12.0, None, worse_when="higher")  # fmt: skip
    report = AlarmReport("out", night2, [], baseline=night1, regressions=[regressed])
    (line,) = report.alarm_lines()
    assert line.startswith(f"{MEDIAN} regressed from 5.0 h at night-1 to not reached at night-2")
