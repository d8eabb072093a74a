"""End-to-end tests of pipeline/check.py, pipeline/stats.py and pipeline/compare.py on one
tiny OUT (two census points over two sessions), with values worked out by hand: which points
a check decides and what its summary says, every rule for each snapshot once, what compute
carries, the lifetime summary as the SQL gives it, and a paired comparison whose interval is
worked out by hand. The pure functions are in tests/test_mutation_units.py. See
docs/testing.md for how mutmut uses both.
"""

from __future__ import annotations

import shutil
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from pathlib import Path
from statistics import NormalDist

import pytest

from pipeline import check as check_module
from pipeline.check import check, evaluate
from pipeline.compare import CLEAN, MEDIAN, Comparison, Selector, compare, ordered
from pipeline.engine import connect
from pipeline.rules import ruleset
from pipeline.stats import compute
from pipeline.store import Out
from pipeline.vocabulary import GATES
from tests.mixed_corpus import CASES, build_case

RULES = 19


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


def test_every_table_is_written_in_its_declared_types(checked: Path) -> None:
    """check, and the crawl for the rows it makes itself (observations, runs), copy rows from
    DuckDB straight to Parquet: each file must still carry the schema module's columns, in
    order and type, as the crawl's pyarrow files do (DuckDB marks a column it knows is never
    null as required; that is all that may differ)."""
    import pyarrow.parquet as pq

    from pipeline.schema import TABLES, arrow_schema

    out = Out(checked)
    seen = set()
    for name, table in TABLES.items():
        for file in out.files(name):
            found = [(f.name, f.type) for f in pq.read_schema(file)]
            assert found == [(f.name, f.type) for f in arrow_schema(table)], file
            seen.add(name)
    check_tables = {"rule_results", "checks", "rule_counts", "session_verdicts", "longest_open"}
    assert seen >= check_tables | {"observations", "runs", "snapshots", "forks"}


def test_evaluate_returns_every_rule_for_each_snapshot(checked: Path) -> None:
    con = connect(Out(checked))
    ids = [r[0] for r in con.execute("SELECT DISTINCT snapshot_id FROM snapshots").fetchall()]
    table = con.sql(f"SELECT * FROM {evaluate(con, ids[:2], 'rs-test')}").to_arrow_table()
    assert table.column_names == [
        "snapshot_id",
        "ruleset",
        "rule_id",
        "gate",
        "rule_gate",
        "status",
        "file",
        "line",
        "message",
    ]
    got = table.to_pylist()
    assert {r["ruleset"] for r in got} == {"rs-test"}
    assert {r["snapshot_id"] for r in got} == set(ids[:2])
    assert len({(r["snapshot_id"], r["rule_id"]) for r in got}) == 2 * RULES
    # A row at the rule's own gate and at every later one (spec §6: per snapshot, gate, rule).
    gates = {(r["snapshot_id"], r["rule_id"], r["gate"], r["rule_gate"]) for r in got}
    expected = {(s, rule, g, own) for s, rule, _, own in gates for g in GATES[GATES.index(own) :]}
    assert gates == expected
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


# ───────────────────────────── stats ─────────────────────────────


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
    # Every stage at every point, 0 where none (the grid the report shows).
    assert {(s.point, s.stage, s.sessions) for s in result.stages} == {
        (p.name, stage, int(stage in ("open", "converging")))
        for p in result.history
        for stage in ("open", "converging", "applied", "harvested")
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
    from pipeline.select import all_points
    from pipeline.stats import lifetimes
    from tests.conftest import show_lifetimes_unfrozen

    con = connect(Out(checked))
    runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY started_at").fetchall()]
    point = all_points(con)[-1]
    assert list(point.runs) == runs[1:]
    show_lifetimes_unfrozen(con)  # the pass runs here, and leaves the views read below
    hours, syncs = lifetimes(con, point, runs, {})
    row = con.execute(
        "SELECT * FROM km_summary('lifetimes_syncs', ?, ?) WHERE grp = 'overall'",
        [NormalDist().inv_cdf(0.975), 0.025],
    )
    names = [d[0] for d in row.description]
    summary = dict(zip(names, row.fetchone(), strict=True))  # the syncs durations
    overall = syncs.overall
    for name in ("forks", "estimated", "closes", "censored", "competing", "unknown"):
        assert getattr(overall, name) == summary[name], name
    for name in ("median", "median_lower", "median_upper", "p25", "p75"):
        assert getattr(overall, name) == summary[name], name
    assert overall.forks > 0 and hours.overall.forks == overall.forks
    labelled = lifetimes(con, point, runs, {"run=x": runs[:1]})
    assert [set(unit.by_label) for unit in labelled] == [{"run=x"}, {"run=x"}]
    assert len(hours.overall.curve) >= 1 and hours.overall.curve[0].time == 0.0


# ───────────────────────────── compare ─────────────────────────────


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
    assert (fork03.baseline.count, fork03.baseline.evaluated) == (0, 1)
    assert (fork03.candidate.count, fork03.candidate.evaluated) == (1, 1)
    assert (fork03.design, fork03.difference, fork03.worse_when) == ("paired", 1.0, "higher")
    assert fork03.p_value == 1.0 and fork03.verdict == "unchanged"
    # Paired Newcombe with a = b = d = 0, c = 1 (n = 1) at z for 1 − 0.05/21, by hand: φ = 0,
    # Wilson 1/1 is [1/(1+z²), 1] and 0/1 is [0, z²/(1+z²)], so the difference 1 has upper
    # 1 + 0 and lower 1 − √2 · z²/(1+z²).
    z = NormalDist().inv_cdf(1 - 0.05 / family / 2)
    assert fork03.upper == pytest.approx(1.0)
    assert fork03.lower == pytest.approx(1 - 2**0.5 * z * z / (1 + z * z))
    clean = rows[CLEAN]
    assert (clean.baseline.count, clean.baseline.evaluated) == (2, 2)
    assert (clean.candidate.count, clean.candidate.evaluated) == (1, 2)
    assert (clean.worse_when, clean.difference) == ("lower", -0.5)
    assert rows["BS-OPS-02"].verdict == "no sessions" and rows["BS-OPS-02"].p_value is None
    # No test ran on it: no design, and each arm's skipped sessions beside it.
    assert rows["BS-OPS-02"].design is None
    assert rows["BS-OPS-02"].baseline.skipped == rows["BS-OPS-02"].candidate.skipped == 2
    counts = result.counts()
    assert counts == {
        "regression": 0,
        "improvement": 0,
        "unchanged": sum(r.verdict == "unchanged" for r in result.rows),
        "no sessions": sum(r.verdict == "no sessions" for r in result.rows),
        "no forks": sum(r.verdict == "no forks" for r in result.rows),
        "skipped everywhere": 0,
    }
    assert result.regressions == []
    plain = result.as_json()
    assert list(plain) == [
        "baseline",
        "candidate",
        "family_size",
        "confidence",
        "counts",
        "emptied",
        "baseless",
        "unseen",
        "baseline_only",
        "candidate_only",
        "notes",
        "rows",
    ]
    assert plain["emptied"] == plain["baseless"] == 0  # both arms saw sessions
    assert plain["unseen"] is False
    assert plain["baseline_only"] == plain["candidate_only"] == 0  # the same sessions
    assert plain["baseline"] == {
        "point": result.baseline.name,
        "labels": {"run": "baseline"},
        "runs": list(result.baseline.runs),
    }
    assert [r["metric"] for r in plain["rows"]] == [r.metric for r in ordered(result.rows)]


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


# ─────────────── where check reads a night's new snapshots from ───────────────


def _night_one(base: Path) -> tuple[Path, Path]:
    """Two sessions crawled as night 1; returns OUT and the forks.md that night 2 edits."""
    from pipeline.crawl import crawl

    root = base / "root"
    build_case(CASES["healthy-open"], root / "edited")
    build_case(CASES["healthy-converging"], root / "kept")
    out = base / "out"
    crawl([str(root)], str(out), workers=1)
    return out, root / "edited" / "docs" / "research" / "demo-brainstorm" / "forks.md"


def _night_two(out: Path, forks: Path) -> None:
    """One session gains a fork; the other is unchanged (its snapshot is night 1's)."""
    from pipeline.crawl import crawl

    forks.write_text(forks.read_text() + "\n## F9 — Raised tonight [open]\n- Raised by: user\n")
    crawl([str(forks.parents[4])], str(out), workers=1)


def _decided(out: Path) -> list[tuple[object, ...]]:
    con = connect(Out(out))
    found = con.execute(
        "SELECT point, rule_id, evaluated, failed, info, skipped FROM rule_counts "
        "UNION ALL SELECT point, session_key, root, clean::VARCHAR, failing_rules, NULL "
        "FROM session_verdicts ORDER BY ALL"
    ).fetchall()
    return [*found, *con.execute("SELECT * FROM rule_results ORDER BY ALL").fetchall()]


def test_a_nights_new_snapshots_are_read_from_its_own_runs_files(tmp_path: Path) -> None:
    out, forks = _night_one(tmp_path)
    check(str(out))
    _night_two(out, forks)
    con = connect(Out(out))
    night2 = con.execute("SELECT point, runs FROM points ORDER BY position DESC").fetchone()
    sources = check_module._fresh_sources(Out(out), set(night2[1]))
    assert sources is not None
    written = {str(p) for files in sources.values() for p in files}
    assert written and all(f"written_by={night2[1][0]}" in p for p in written)
    # A compaction since the night's crawl may have moved its rows: every file is read then,
    # and the check decides the same.
    compacted = tmp_path / "compacted"
    shutil.copytree(out, compacted)
    from pipeline.maintain import compact

    compact(str(compacted))
    assert check_module._fresh_sources(Out(compacted), set(night2[1])) is None
    check(str(out))
    check(str(compacted))
    assert _decided(out) == _decided(compacted)


def test_a_snapshot_stored_by_an_earlier_night_is_still_evaluated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a new rule set, night 2's unchanged session has a snapshot night 1 stored and no
    result yet: it is not in night 2's files, so check must read it from night 1's."""
    out, forks = _night_one(tmp_path)
    with monkeypatch.context() as patched:
        patched.setattr(check_module, "ruleset", lambda: "an-older-rule-set")
        check(str(out))
    _night_two(out, forks)
    summary = check(str(out))
    assert summary.snapshots == 2
    con = connect(Out(out))
    night2 = summary.points[0]
    per_session = con.execute(
        "SELECT s.session_key, count(r.rule_id) FROM point_sessions s "
        "JOIN rule_results r ON r.snapshot_id = s.snapshot_id AND r.ruleset = $rs "
        "WHERE s.point = $point GROUP BY ALL",
        {"rs": ruleset(), "point": night2},
    ).fetchall()
    assert len(per_session) == 2 and all(n >= RULES for _, n in per_session)
    verdicts = con.execute(
        "SELECT count(*) FROM session_verdicts WHERE point = $point", {"point": night2}
    ).fetchone()
    assert verdicts == (2,)
