"""The numbers users read, against the synthetic generator's independent oracle.

fixtures/generate.py evaluates every rule on its own in-memory model (sharing no code with
the census) and writes truth.jsonl and truth-summary.json, whose `own_gate` block counts
evaluated/fail/info/skipped per rule over each session at its own gate (its own copy of
the stage → gate mapping). Here a generated corpus is crawled and checked for real, and
rule_rates, their Wilson bounds (computed below from the textbook formula, not the SQL
macro), the stage counts, the clean share, each session's failing rules, the worst-sessions
order and compare's failed/evaluated per arm must all equal what the oracle says.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pytest

from pipeline.check import check
from pipeline.compare import CLEAN, Selector, compare
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.store import Out
from tests.conftest import generate_corpus

SESSIONS = 160
Z = NormalDist().inv_cdf(0.975)


def wilson(k: int, n: int, z: float = Z) -> tuple[float, float]:
    """Wilson's score interval (1927), written out from the formula."""
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - half) / (1 + z * z / n)), min(1.0, (centre + half) / (1 + z * z / n))


def truth(corpus: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    summary = json.loads((corpus / "truth-summary.json").read_text())
    records = [json.loads(line) for line in (corpus / "truth.jsonl").read_text().splitlines()]
    return summary, records


def own_fails(record: dict[str, Any]) -> list[str]:
    # The oracle's own mapping, read from its module: no census code involved.
    from fixtures.generate import OWN_GATE

    return list(record["gates"][OWN_GATE[record["stage"]]]["fail"])


@pytest.fixture(scope="module")
def arms(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """A baseline corpus and a candidate with the same sessions and other defects, crawled
    into one OUT as two labelled census points and checked."""
    base = tmp_path_factory.mktemp("oracle")
    baseline = generate_corpus(base / "baseline", SESSIONS, 5, 0.12)
    candidate = generate_corpus(
        base / "candidate", SESSIONS, 5, 0.12, "--defect-seed", "9", "--rate", "BS-FORK-01=0.4"
    )
    out = base / "out"
    crawl([str(baseline)], str(out), {"run": "baseline"}, workers=2)
    crawl([str(candidate)], str(out), {"run": "candidate"}, workers=2)
    check(str(out))
    return baseline, candidate, out


def point_of(con: Any, label: str) -> str:
    found = con.execute(
        "SELECT DISTINCT p.point FROM runs r JOIN run_points p USING (run_id) "
        "WHERE r.labels['run'] = ?",
        [label],
    ).fetchall()
    assert len(found) == 1, found
    return str(found[0][0])


def rates_at(con: Any, point: str) -> dict[str, dict[str, Any]]:
    cursor = con.execute("SELECT * FROM rule_rates WHERE point = ?", [point])
    names = [d[0] for d in cursor.description]
    return {row[2]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


@pytest.mark.slow
@pytest.mark.parametrize("arm", ["baseline", "candidate"])
def test_rule_rates_and_wilson_bounds_match_the_oracle(
    arms: tuple[Path, Path, Path], arm: str
) -> None:
    corpus = arms[0] if arm == "baseline" else arms[1]
    summary, _ = truth(corpus)
    con = connect(Out(arms[2]))
    got = rates_at(con, point_of(con, arm))
    want = summary["own_gate"]
    assert set(got) == set(want)
    for rule, counts in want.items():
        row = got[rule]
        shown = (row["evaluated"], row["failed"], row["info"], row["skipped"])
        assert shown == (counts["evaluated"], counts["fail"], counts["info"], counts["skipped"]), (
            rule
        )
        if counts["evaluated"]:
            lower, upper = wilson(counts["fail"], counts["evaluated"])
            assert row["rate"] == pytest.approx(counts["fail"] / counts["evaluated"], abs=1e-12)
            assert (row["rate_lo"], row["rate_hi"]) == (
                pytest.approx(lower, abs=1e-9),
                pytest.approx(upper, abs=1e-9),
            ), rule
    assert sum(c["fail"] for c in want.values()) > 20, "the oracle injected defects"


@pytest.mark.slow
def test_stages_clean_share_failing_rules_and_worst_order(arms: tuple[Path, Path, Path]) -> None:
    from pipeline.report import _query

    summary, records = truth(arms[0])
    con = connect(Out(arms[2]))
    point = point_of(con, "baseline")
    cursor = con.execute(
        "SELECT repo_path, path, stage, clean, failing_rules FROM sessions WHERE point = ?", [point]
    )
    sessions = {(r[0], r[1]): r[2:] for r in cursor.fetchall()}
    assert len(sessions) == summary["sessions"] == SESSIONS
    stages = {s: sum(v[0] == s for v in sessions.values()) for s in summary["stages"]}
    assert stages == summary["stages"]
    assert sum(v[1] for v in sessions.values()) == summary["clean_at_own_gate"]
    for record in records:
        stage, clean, failing = sessions[(record["repo"], record["path"])]
        assert (stage, clean, failing) == (
            record["stage"],
            not own_fails(record),
            len(own_fails(record)),
        ), record["path"]
    # Worst first: most failing rules, then repository and path.
    ranked = sorted(
        (r for r in records if own_fails(r)),
        key=lambda r: (-len(own_fails(r)), r["repo"], r["path"]),
    )[:10]
    rows = con.execute(_query("worst"), {"point": point, "limit": 10}).fetchall()
    names = [d[0] for d in con.description]
    listed = list(dict.fromkeys((r[names.index("repo")], r[names.index("path")]) for r in rows))
    assert listed == [(r["repo"], r["path"]) for r in ranked]
    assert len(own_fails(ranked[0])) > len(own_fails(ranked[-1])), "the order is tested"


@pytest.mark.slow
def test_compare_arms_are_the_oracles_counts(arms: tuple[Path, Path, Path]) -> None:
    (base_summary, _), (cand_summary, _) = truth(arms[0]), truth(arms[1])
    result = compare(
        str(arms[2]), Selector(labels={"run": "baseline"}), Selector(labels={"run": "candidate"})
    )
    rows = {r.metric: r for r in result.rows}
    for rule in base_summary["own_gate"]:
        row = rows[rule]
        for arm, summary in ((row.baseline, base_summary), (row.candidate, cand_summary)):
            counts = summary["own_gate"][rule]
            assert (arm.count, arm.evaluated) == (counts["fail"], counts["evaluated"]), rule
    clean = rows[CLEAN]
    assert (clean.baseline.count, clean.baseline.evaluated) == (
        base_summary["clean_at_own_gate"],
        SESSIONS,
    )
    assert (clean.candidate.count, clean.candidate.evaluated) == (
        cand_summary["clean_at_own_gate"],
        SESSIONS,
    )
    fork01 = rows["BS-FORK-01"]
    assert fork01.difference == pytest.approx(
        fork01.candidate.count / fork01.candidate.evaluated
        - fork01.baseline.count / fork01.baseline.evaluated
    )
    assert fork01.verdict == "regression", "a 0.12 → 0.4 defect rate is beyond noise"
