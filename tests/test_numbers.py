"""The numbers users read, pinned to values worked out by hand (tests/mixed_corpus.py) or
published (Newcombe 1998), never to another copy of the census's own SQL.

A mixed-stage corpus (5 open, 3 converging, 2 applied, 3 harvested sessions) is crawled and
checked for real; then the rule_rates view, `census check`'s table, `census stats` (text and
JSON), the sessions view (own gates, clean share, failing rules) and `census compare`'s rows
per arm must show exactly the hand-counted figures.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.check import check
from pipeline.cli import app
from pipeline.compare import Selector, compare
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.stats import compute
from pipeline.store import Out
from tests.mixed_corpus import CASES, CLEAN, RATES, SESSIONS, STAGES, WORST, build_case, build_mixed

# Wilson score intervals at 95%, worked by hand to four places (centre ± half-width over
# 1 + z²/n, z = 1.95996; for k = 0 the upper bound is z² / (n + z²)): k of n → (lower, upper).
WILSON_95 = {
    (0, 13): (0.0, 0.2281),
    (1, 13): (0.0137, 0.3331),
    (2, 10): (0.0567, 0.5098),
    (0, 10): (0.0, 0.2775),
    (1, 8): (0.0224, 0.4709),
    (2, 2): (0.3424, 1.0),
    (1, 2): (0.0945, 0.9055),
    (0, 5): (0.0, 0.4345),
    (0, 4): (0.0, 0.4899),
    (0, 8): (0.0, 0.3244),
    (0, 2): (0.0, 0.6576),
}
# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I,
# method 3 (Wilson score without continuity correction).
PUBLISHED = {
    (81, 263): (0.2553, 0.3662),
    (15, 148): (0.0624, 0.1605),
    (0, 20): (0.0, 0.1611),
    (1, 29): (0.0061, 0.1718),
    (1, 5): (0.0362, 0.6245),
}
OWN_GATE_BY_HAND = {"open": "session", "converging": "manifest", "applied": "move"}
OWN_GATE_BY_HAND["harvested"] = "move"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("mixed")
    corpus = build_mixed(base / "corpus")
    out = base / "out"
    crawl([str(corpus)], str(out), workers=1)
    check(str(out))
    return out


def rows(con: Any, query: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    cursor = con.execute(query, params or {})
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def test_rule_rates_count_each_session_at_its_own_gate(mixed: Path) -> None:
    con = connect(Out(mixed))
    got = {
        r["rule_id"]: (r["gate"], r["evaluated"], r["failed"], r["info"], r["skipped"])
        for r in rows(con, "SELECT * FROM rule_rates")
    }
    assert got == RATES


def test_the_hand_counts_agree_with_the_cases_expectations() -> None:
    # A second derivation of RATES, from cases.toml's hand-written statuses, so that an
    # arithmetic slip in the table above cannot pass for the truth.
    derived: dict[str, list[int]] = {}
    for folder, (name, stage, failing) in SESSIONS.items():
        gate = OWN_GATE_BY_HAND[stage]
        want = CASES[name]["expect"][gate]
        fail = set(want["fail"]) | set(failing)
        for rule, (rule_gate, *_counts) in RATES.items():
            if ("session", "manifest", "move").index(rule_gate) > (
                "session",
                "manifest",
                "move",
            ).index(gate):
                continue
            counts = derived.setdefault(rule, [0, 0, 0, 0])
            if rule in want["skipped"]:
                counts[3] += 1
                continue
            counts[0] += 1
            counts[1] += rule in fail
            counts[2] += rule in want["info"]
        assert set(failing) == fail, folder
    assert {rule: (RATES[rule][0], *counts) for rule, counts in derived.items()} == RATES


def test_rates_and_wilson_bounds_are_the_hand_worked_ones(mixed: Path) -> None:
    con = connect(Out(mixed))
    seen = set()
    for r in rows(con, "SELECT * FROM rule_rates"):
        key = (r["failed"], r["evaluated"])
        if r["evaluated"] == 0:
            assert (r["rate"], r["rate_lo"], r["rate_hi"]) == (None, None, None)
            continue
        assert r["rate"] == pytest.approx(key[0] / key[1])
        lower, upper = WILSON_95[key]
        assert (round(r["rate_lo"], 4), round(r["rate_hi"], 4)) == (lower, upper), r["rule_id"]
        seen.add(key)
    assert {(2, 10), (1, 13), (1, 8), (1, 2), (2, 2)} <= seen


def test_wilson_macro_at_z95_matches_newcombe_table_1() -> None:
    con = connect(None)
    for (k, n), (lower, upper) in PUBLISHED.items():
        got = con.execute(f"SELECT wilson_lo({k}, {n}, z95()), wilson_hi({k}, {n}, z95())")
        lo, hi = got.fetchone()
        assert (round(lo, 4), round(hi, 4)) == (lower, upper), (k, n)
    # No session evaluated: no interval at all, not [0, 1] ("no sessions" in every table).
    assert con.execute("SELECT wilson_lo(0, 0, z95()), wilson_hi(0, 0, z95())").fetchall() == [
        (None, None)
    ]


def test_own_gate_populations_and_the_clean_share(mixed: Path) -> None:
    con = connect(Out(mixed))
    sessions = {
        r["repo"]: r
        for r in rows(con, "SELECT repo, stage, gate, clean, failing_rules FROM sessions")
    }
    assert sorted(sessions) == sorted(SESSIONS)
    for folder, (_, stage, failing) in SESSIONS.items():
        got = sessions[folder]
        assert (got["stage"], got["gate"]) == (stage, OWN_GATE_BY_HAND[stage]), folder
        assert (got["clean"], got["failing_rules"]) == (not failing, len(failing)), folder
    assert sum(r["clean"] for r in sessions.values()) == CLEAN
    stages = {s: sum(r["stage"] == s for r in sessions.values()) for s in STAGES}
    assert stages == STAGES


def test_findings_are_the_failing_rules_at_each_own_gate_and_the_info(mixed: Path) -> None:
    """The findings view lists, per session, exactly the hand-counted rules failing at its own
    gate (a rule failing only at a later gate is not the session's finding), and the one
    `none yet` aspect as info."""
    con = connect(Out(mixed))
    found = rows(con, "SELECT DISTINCT repo, rule_id, status FROM findings")
    failing = {(r["repo"], r["rule_id"]) for r in found if r["status"] == "fail"}
    assert failing == {(f, rule) for f, (_, _, rules) in SESSIONS.items() for rule in rules}
    info = {(r["repo"], r["rule_id"]) for r in found if r["status"] == "info"}
    assert info == {("open-none-yet", "BS-ASPECT-01")}


def test_idle_time_is_seen_minus_content_time(mixed: Path) -> None:
    """Idle hours are how long a session has sat since its content last changed: never
    negative, since the crawl sees content after it was written."""
    idle = compute(str(mixed)).idle
    measured = [i for i in idle if i.measured]
    assert measured and all((i.idle_p50_hours or 0) > 0 for i in measured)


def test_a_compose_at_the_newest_turns_minute_is_stale(tmp_path: Path) -> None:
    """Compose lag counts as stale what BS-COMPOSE-02 fails: a Last compose equal to the newest
    turn (16:05 and 16:05, lag 0 h) as well as one before it, and `Last compose: never` beside
    turns (counted stale too, not only never_composed, as the rule fails it)."""
    corpus = tmp_path / "corpus"
    build_case(CASES["compose-02-same-minute-is-stale"], corpus / "same-minute")
    build_case(CASES["compose-02-second-before-passes"], corpus / "second-before")
    build_case(CASES["compose-01-never-against-stamp"], corpus / "never")
    crawl([str(corpus)], str(tmp_path / "out"), workers=1)
    check(str(tmp_path / "out"))
    lag = {c.stage: c for c in compute(str(tmp_path / "out")).compose_lag}["all"]
    assert (lag.sessions, lag.measured, lag.stale, lag.never_composed) == (3, 2, 2, 1)
    con = connect(Out(tmp_path / "out"))
    failing = con.execute(
        "SELECT count(*) FROM statuses WHERE rule_id = 'BS-COMPOSE-02' AND status = 'fail'"
    ).fetchone()
    assert failing == (lag.stale,)


def test_stats_shows_the_hand_counted_rates_and_stages(mixed: Path) -> None:
    stats = compute(str(mixed))
    got = {r.rule_id: (r.gate, r.evaluated, r.failed, r.info, r.skipped) for r in stats.rule_rates}
    assert got == RATES
    assert {s.stage: s.sessions for s in stats.stages} == STAGES
    sync02 = next(r for r in stats.rule_rates if r.rule_id == "BS-SYNC-02")
    assert (round(sync02.rate_lo, 4), round(sync02.rate_hi, 4)) == WILSON_95[(2, 10)]


def cells(text: str, rule: str) -> list[str]:
    """The cells of a rule's row in a rich table printed to a pipe (2+ spaces apart)."""
    line = next(ln for ln in text.splitlines() if ln.strip().startswith(rule + " "))
    return re.split(r"\s{2,}", line.strip().strip("│┃").strip())


def test_check_and_stats_print_the_hand_worked_rows(mixed: Path) -> None:
    runner = CliRunner()
    env = {"COLUMNS": "200"}
    for command in (["check"], ["stats"]):
        result = runner.invoke(app, [*command, "--out", str(mixed)], env=env)
        assert result.exit_code == 0, result.output
        text = result.output
        assert cells(text, "BS-SYNC-02")[:4] == [
            "BS-SYNC-02",
            "session",
            "2/10 20.0%",
            "5.7% – 51.0%",
        ]
        assert cells(text, "BS-FORK-03")[:4] == [
            "BS-FORK-03",
            "manifest",
            "1/8 12.5%",
            "2.2% – 47.1%",
        ]
        assert cells(text, "BS-USELESS-01")[:4] == [
            "BS-USELESS-01",
            "move",
            "1/2 50.0%",
            "9.5% – 90.5%",
        ]
        # info and skipped: `check` leaves a zero blank, `stats` prints it.
        zero = [] if command == ["check"] else ["0"]
        assert cells(text, "BS-OPS-02")[2:] == ["2/2 100.0%", "34.2% – 100.0%", *zero, "11"]
        assert cells(text, "BS-ASPECT-01")[2:] == ["0/13 0.0%", "0.0% – 22.8%", "1", *zero]


def test_stats_json_carries_the_hand_counted_rates(mixed: Path) -> None:
    result = CliRunner().invoke(app, ["stats", "--out", str(mixed), "--json"])
    assert result.exit_code == 0, result.output
    rates = {r["rule_id"]: r for r in json.loads(result.output)["rule_rates"]}
    assert {
        k: (r["gate"], r["evaluated"], r["failed"], r["info"], r["skipped"])
        for k, r in rates.items()
    } == RATES
    assert round(rates["BS-OPS-01"]["rate_hi"], 4) == WILSON_95[(2, 10)][1]


def test_worst_sessions_query_orders_worst_first(mixed: Path) -> None:
    from pipeline.report import _query

    con = connect(Out(mixed))
    point = con.execute("SELECT max_by(point, position) FROM points").fetchone()[0]
    for limit, want in ((25, WORST), (2, WORST[:2])):
        found = rows(con, _query("worst"), {"point": point, "limit": limit})
        order = list(dict.fromkeys((r["repo"], r["failing_rules"]) for r in found))
        assert order == want, limit


# ───────────────────────────── compare: failed/evaluated per arm ─────────────────────────────


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mixed corpus as baseline; as candidate, conv-healthy opens a fork at the stop
    (fork-03-open-fork-at-stop), so BS-FORK-03 goes 1/8 → 2/8 and the clean share 6/13 → 5/13."""
    base = tmp_path_factory.mktemp("replay")
    baseline = build_mixed(base / "baseline")
    candidate = base / "candidate"
    shutil.copytree(baseline, candidate, symlinks=True)
    shutil.rmtree(candidate / "conv-healthy")
    build_case(CASES["fork-03-open-fork-at-stop"], candidate / "conv-healthy")
    out = base / "out"
    crawl([str(baseline)], str(out), {"run": "baseline"}, workers=1)
    crawl([str(candidate)], str(out), {"run": "candidate"}, workers=1)
    check(str(out))
    return out


def test_compare_rows_give_each_arms_hand_counted_failed_over_evaluated(replay: Path) -> None:
    result = compare(
        str(replay), Selector(labels={"run": "baseline"}), Selector(labels={"run": "candidate"})
    )
    by_metric = {r.metric: r for r in result.rows}
    for rule, (gate, evaluated, failed, _, _) in RATES.items():
        row = by_metric[rule]
        after = failed + (rule == "BS-FORK-03")
        got = (row.gate, row.baseline.count, row.baseline.evaluated)
        assert got == (gate, failed, evaluated), rule
        assert (row.candidate.count, row.candidate.evaluated) == (after, evaluated), rule
        assert row.design == "paired", rule
    fork03 = by_metric["BS-FORK-03"]
    assert (fork03.baseline.value, fork03.candidate.value) == (1 / 8, 2 / 8)
    assert fork03.difference == pytest.approx(1 / 8)
    assert fork03.lower < 0 < fork03.upper and fork03.verdict == "unchanged"
    assert fork03.p_value == 1.0  # one discordant pair: 2 · C(1,0) / 2 = 1
    clean = by_metric["clean-share"]
    assert (clean.baseline.count, clean.baseline.evaluated) == (CLEAN, 13)
    assert (clean.candidate.count, clean.candidate.evaluated) == (CLEAN - 1, 13)
