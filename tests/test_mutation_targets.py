"""Fast tests of pipeline/check.py, pipeline/stats.py and pipeline/compare.py, for mutmut.

mutmut runs a test selection per mutant, so this file is small and quick (one tiny OUT,
built once): it pins the Python glue of the three modules (which points a check decides,
what a summary reports, how rows become records, verdicts at their boundaries, family-wise
intervals, JSON shapes) with values worked out by hand. The rates themselves are pinned by
tests/test_numbers.py and tests/test_numbers_oracle.py. See docs/testing.md.
"""

from __future__ import annotations

import shutil
from dataclasses import fields
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from statistics import NormalDist

import pytest

from pipeline import check as check_module
from pipeline.check import check, evaluate
from pipeline.compare import (
    CLEAN,
    MEDIAN,
    Arm,
    Comparison,
    Row,
    Selector,
    compare,
    mcnemar_exact,
    median_row,
    ordered,
    verdict,
)
from pipeline.engine import connect
from pipeline.rules import ruleset
from pipeline.select import Point
from pipeline.stats import (
    CLOSE_KINDS,
    Lifetime,
    RuleRate,
    _lifetimes,
    _plain,
    compute,
    history_runs,
    query_sql,
    records,
)
from pipeline.store import Out
from tests.mixed_corpus import CASES, build_case

RULES = 19
WHEN = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two census points over the same two sessions (an open and a converging base); in the
    candidate the converging session opens a fork at the stop (BS-FORK-03 fails there)."""
    base = tmp_path_factory.mktemp("tiny")
    for arm in ("baseline", "candidate"):
        build_case(CASES["healthy-open"], base / arm / "open")
        name = "healthy-converging" if arm == "baseline" else "fork-03-open-fork-at-stop"
        build_case(CASES[name], base / arm / "conv")
    out = base / "out"
    from pipeline.crawl import crawl

    crawl([str(base / "baseline")], str(out), {"run": "baseline"}, workers=1)
    crawl([str(base / "candidate")], str(out), {"run": "candidate"}, workers=1)
    return out


@pytest.fixture(scope="module")
def checked(tiny: Path) -> Path:
    summary = check(str(tiny))
    assert len(summary.points) == 2
    return tiny


# ───────────────────────────── check ─────────────────────────────


def test_first_check_decides_both_points_and_evaluates_each_snapshot_once(tiny: Path) -> None:
    out = tiny.parent / "first"
    shutil.copytree(tiny, out)
    summary = check(str(out))
    con = connect(Out(out))
    names = [r[0] for r in con.execute("SELECT point FROM points ORDER BY position").fetchall()]
    assert summary.points == names
    # The open session is the same content in both arms: 3 distinct snapshots, not 4.
    assert summary.snapshots == 3
    assert (summary.series_findings, summary.previous_ruleset) == (0, None)
    assert summary.ruleset == ruleset() and summary.unchanged == []
    assert summary.rechecked is False and summary.seconds > 0
    rows = con.execute(
        "SELECT count(DISTINCT (snapshot_id, rule_id)), count(DISTINCT snapshot_id) "
        "FROM rule_results"
    )
    assert rows.fetchone() == (3 * RULES, 3)
    checks = con.execute(
        "SELECT point, snapshots_evaluated, series_findings FROM checks ORDER BY point"
    ).fetchall()
    assert sorted(checks) == sorted((p, 3, 0) for p in names)
    assert con.execute("SELECT bool_and(checked) FROM points").fetchone()[0] is True

    again = check(str(out))
    assert (again.points, again.snapshots, again.unchanged) == ([], 0, names)
    redo = check(str(out), recheck=True)
    assert (redo.points, redo.snapshots, redo.unchanged, redo.rechecked) == (names, 0, [], True)
    assert connect(Out(out)).execute("SELECT count(*) FROM checks").fetchone()[0] == 4


def test_a_new_rule_set_is_reported_against_the_last(tiny: Path) -> None:
    out = tiny.parent / "ruleset"
    shutil.copytree(tiny, out)
    check(str(out))
    con = connect(Out(out))
    con.close()
    # Pretend the last check used another rule set: the next check names it.
    from pipeline.schema import CHECKS
    from pipeline.store import PartitionWriter, publish

    staging = Path(out) / "staging" / "fake"
    writer = PartitionWriter(staging, [CHECKS])
    later = datetime.now(UTC) + timedelta(days=1)
    writer.write(
        CHECKS.name,
        [
            {
                "check_id": "99999999T999999Z-ffffff",
                "point": "nowhere",
                "ruleset": "older",
                "checked_at": later,
                "tool_version": "0",
                "snapshots_evaluated": 0,
                "series_findings": 0,
            }
        ],
    )
    writer.close()
    publish(Out(out), staging, "fake")
    summary = check(str(out), recheck=True)
    assert summary.previous_ruleset == "older"


def test_evaluate_returns_every_rule_for_each_snapshot(checked: Path) -> None:
    con = connect(Out(checked))
    ids = [r[0] for r in con.execute("SELECT DISTINCT snapshot_id FROM snapshots").fetchall()]
    table = evaluate(con, ids[:2], "rs-test")
    assert table.column_names == [
        "snapshot_id",
        "ruleset",
        "rule_id",
        "gate",
        "status",
        "file",
        "line",
        "message",
    ]
    got = table.to_pylist()
    assert {r["ruleset"] for r in got} == {"rs-test"}
    assert {r["snapshot_id"] for r in got} == set(ids[:2])
    assert len({(r["snapshot_id"], r["rule_id"]) for r in got}) == 2 * RULES
    keys = [(r["snapshot_id"], r["rule_id"]) for r in got]
    assert keys == sorted(keys), "ordered by snapshot and rule"
    # The connection is usable afterwards: the search path is restored.
    assert con.execute("SELECT count(*) FROM rule_results").fetchone()[0] > 0


def test_unevaluated_lists_only_snapshots_without_results(checked: Path) -> None:
    con = connect(Out(checked))
    points = [r[0] for r in con.execute("SELECT point FROM points ORDER BY position").fetchall()]
    assert check_module._unevaluated(con, points, ruleset()) == []
    every = check_module._unevaluated(con, points, "another")
    assert len(every) == 3 and every == sorted(every)
    first = con.execute(
        "SELECT DISTINCT snapshot_id FROM observations JOIN run_points USING (run_id) "
        "WHERE point = ? ORDER BY 1",
        [points[0]],
    ).fetchall()
    assert check_module._unevaluated(con, points[:1], "another") == [r[0] for r in first]
    assert check_module._points(con) == [(p, True) for p in points]


def test_check_stamps_utc_now() -> None:
    before = datetime.now(UTC)
    now = check_module._now()
    assert now.tzinfo is not None and before <= now <= datetime.now(UTC)


# ───────────────────────────── stats ─────────────────────────────


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
    }
    result = _lifetimes("hours", groups)
    assert result.unit == "hours" and result.overall is one
    assert result.by_close_kind == {"resolved": Lifetime(), "parked": two}
    assert list(result.by_close_kind) == list(CLOSE_KINDS)
    assert result.by_raised_by == {"twin": three, "user": one}
    assert result.by_label == {"run=a": two}
    assert [name for name, _ in result.groups()] == [
        "all forks",
        "closed: resolved",
        "closed: parked",
        "raised by: twin",
        "raised by: user",
        "label run=a",
    ]
    assert _lifetimes("syncs", {}).overall == Lifetime()


def test_compute_carries_every_figure_of_the_point(checked: Path) -> None:
    result = compute(str(checked), labels={"run": "candidate"})
    assert result.point.labels == {"run": "candidate"} and len(result.history) == 2
    assert result.out == str(Out(str(checked)).root)
    rates = {r.rule_id: r for r in result.rule_rates}
    assert len(rates) == RULES
    assert [r.gate for r in result.rule_rates] == sorted(
        (r.gate for r in result.rule_rates), key=("session", "manifest", "move").index
    )
    # The converging session alone is counted at the manifest gate; its open fork fails it.
    fork03 = rates["BS-FORK-03"]
    assert (fork03.evaluated, fork03.failed, fork03.info, fork03.skipped) == (1, 1, 0, 0)
    assert (fork03.rate, round(fork03.rate_lo, 4), fork03.rate_hi) == (1.0, 0.2065, 1.0)
    assert (rates["BS-OPS-02"].evaluated, rates["BS-OPS-02"].skipped) == (0, 2)
    assert {(s.point, s.stage, s.sessions) for s in result.stages} == {
        (p.name, stage, 1) for p in result.history for stage in ("open", "converging")
    }
    assert [t.point for t in result.trend].count(result.point.name) == RULES
    assert {h.gate for h in result.sync_health} >= {"all"}
    assert {c.stage for c in result.compose_lag} >= {"open", "converging"}
    assert result.fork_syncs.unit == "syncs" and result.fork_lifetimes.unit == "hours"
    assert result.fork_syncs.overall.open_at == {}
    assert set(result.fork_lifetimes.overall.open_at) == {"1d", "7d", "30d"}
    assert set(result.fork_lifetimes.by_label) == {"run=baseline", "run=candidate"}
    plain = result.as_json()
    assert plain["point"]["started_at"].endswith("Z")
    assert list(plain) == [f.name for f in fields(result)]


def test_lifetime_summary_is_the_km_summary_row(checked: Path) -> None:
    from pipeline.stats import lifetimes

    con = connect(Out(checked))
    runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY started_at").fetchall()]
    hours, syncs = lifetimes(con, runs, {}, runs[1:])
    row = con.execute(
        "SELECT * FROM km_summary('lifetimes_input', ?) WHERE grp = 'overall'",
        [NormalDist().inv_cdf(0.975)],
    )
    names = [d[0] for d in row.description]
    summary = dict(zip(names, row.fetchone(), strict=True))  # the last unit computed: syncs
    overall = syncs.overall
    for name in ("forks", "estimated", "closes", "censored", "competing", "unknown"):
        assert getattr(overall, name) == summary[name], name
    for name in ("median", "median_lower", "median_upper", "p25", "p75"):
        assert getattr(overall, name) == summary[name], name
    assert overall.forks > 0 and hours.overall.forks == overall.forks
    labelled = lifetimes(con, runs, {"run=x": runs[:1]}, runs[1:])
    assert [set(unit.by_label) for unit in labelled] == [{"run=x"}, {"run=x"}]
    assert len(hours.overall.curve) >= 1 and hours.overall.curve[0].time == 0.0


# ───────────────────────────── compare ─────────────────────────────


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
    assert verdict(row(None, 0.2, 0.1, "higher")) == "unchanged"
    assert verdict(row(0.1, None, 0.1, "higher")) == "unchanged"
    assert verdict(row(0.1, 0.2, None, "higher")) == "unchanged"
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
    base = lifetime(10.0, 8.0, 12.0)
    worse = median_row(base, lifetime(20.0, 12.5, 30.0))
    assert (worse.metric, worse.gate, worse.design, worse.verdict) == (
        MEDIAN,
        "own",
        "medians",
        "regression",
    )
    assert worse.difference == 10.0
    assert (worse.baseline.failed, worse.baseline.evaluated, worse.baseline.value) == (3, 4, 10.0)
    assert median_row(base, lifetime(20.0, 12.0, 30.0)).verdict == "unchanged", "touching"
    assert median_row(base, lifetime(5.0, 2.0, 7.5)).verdict == "improvement"
    assert median_row(base, lifetime(5.0, 2.0, 8.0)).verdict == "unchanged", "touching"
    assert median_row(base, lifetime(None, 12.5, None)).difference is None
    assert median_row(base, lifetime(None, 12.5, None)).verdict == "regression"
    assert median_row(base, lifetime(9.0, None, None)).verdict == "unchanged"
    assert median_row(lifetime(10.0, 8.0, None), lifetime(20.0, 12.5, 30.0)).verdict == (
        "unchanged"
    )
    assert median_row(lifetime(10.0, None, 12.0), lifetime(5.0, 2.0, 7.5)).verdict == "unchanged"
    assert median_row(Lifetime(), base).verdict == "no sessions"
    assert median_row(base, Lifetime()).verdict == "no sessions"


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
    ]
    got = [(r.metric, r.gate, r.verdict) for r in ordered(rows)]
    assert got == [
        ("Z", "move", "regression"),
        ("A", "manifest", "improvement"),
        ("A", "own", "unchanged"),
        ("B", "session", "unchanged"),
        ("B", "move", "unchanged"),
        ("A", "own", "no sessions"),
    ]


def test_compare_tiny_replay(checked: Path) -> None:
    result = compare(
        str(checked), Selector(labels={"run": "baseline"}), Selector(labels={"run": "candidate"})
    )
    family = RULES + 2
    assert result.family_size == family
    assert result.confidence == pytest.approx(1 - 0.05 / family)
    assert result.baseline.labels == {"run": "baseline"}
    assert result.candidate.labels == {"run": "candidate"}
    rows = {r.metric: r for r in result.rows}
    assert len(result.rows) == family and list(rows)[-1] == MEDIAN
    fork03 = rows["BS-FORK-03"]
    assert (fork03.baseline.failed, fork03.baseline.evaluated) == (0, 1)
    assert (fork03.candidate.failed, fork03.candidate.evaluated) == (1, 1)
    assert (fork03.design, fork03.difference, fork03.worse_when) == ("paired", 1.0, "higher")
    assert fork03.p_value == 1.0 and fork03.verdict == "unchanged"
    # Paired Newcombe with a = b = d = 0, c = 1 (n = 1) at z for 1 − 0.05/21, by hand: φ = 0,
    # Wilson 1/1 is [1/(1+z²), 1] and 0/1 is [0, z²/(1+z²)], so the difference 1 has upper
    # 1 + 0 and lower 1 − √2 · z²/(1+z²).
    z = NormalDist().inv_cdf(1 - 0.05 / family / 2)
    assert fork03.upper == pytest.approx(1.0)
    assert fork03.lower == pytest.approx(1 - 2**0.5 * z * z / (1 + z * z))
    clean = rows[CLEAN]
    assert (clean.baseline.failed, clean.baseline.evaluated) == (2, 2)
    assert (clean.candidate.failed, clean.candidate.evaluated) == (1, 2)
    assert (clean.worse_when, clean.difference) == ("lower", -0.5)
    assert rows["BS-OPS-02"].verdict == "no sessions" and rows["BS-OPS-02"].p_value is None
    assert rows["BS-OPS-02"].design == "two-sample"
    counts = result.counts()
    assert counts == {
        "regression": 0,
        "improvement": 0,
        "unchanged": sum(r.verdict == "unchanged" for r in result.rows),
        "no sessions": sum(r.verdict == "no sessions" for r in result.rows),
    }
    assert result.regressions == []
    plain = result.as_json()
    assert list(plain) == [
        "baseline",
        "candidate",
        "family_size",
        "confidence",
        "counts",
        "rows",
    ]
    assert plain["baseline"] == {
        "point": result.baseline.name,
        "labels": {"run": "baseline"},
        "runs": list(result.baseline.runs),
    }
    assert [r["metric"] for r in plain["rows"]] == [r.metric for r in ordered(result.rows)]


def test_comparison_lists_regressions() -> None:
    point = Point("p", 1, WHEN, ("r",))
    bad, fine = row(0.1, 0.2, 0.1, "higher"), row(-0.1, 0.2, 0.1, "higher")
    bad.verdict = "regression"
    comparison = Comparison(point, point, 21, 0.99, [bad, fine])
    assert comparison.regressions == [bad]
    assert comparison.counts()["regression"] == 1


def test_findings_against_baseline_marks_new_unchanged_and_absent(checked: Path) -> None:
    from pipeline.compare import findings_against_baseline

    result = compare(
        str(checked), Selector(labels={"run": "baseline"}), Selector(labels={"run": "candidate"})
    )
    marked = findings_against_baseline(str(checked), result)
    states = sorted((r["rule_id"], r["baselineState"]) for r in marked if r["status"] == "fail")
    assert ("BS-FORK-03", "new") in states
    assert all(state != "absent" for _, state in states)
    swapped = Comparison(result.candidate, result.baseline, 21, 0.99)
    back = findings_against_baseline(str(checked), swapped)
    assert ("BS-FORK-03", "absent") in sorted(
        (r["rule_id"], r["baselineState"]) for r in back if r["status"] == "fail"
    )
