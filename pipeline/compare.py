"""`census compare`: did the candidate break rules more often than the baseline, beyond noise?

Each side is the set of runs whose labels include every `k=v` of its selector, and each
session's latest observation in those runs. For every rule at every gate (all sessions, every
gate — a rule's statuses do not depend on the gate, so one row per rule, labelled with the
rule's own gate, stands for all of them), the failure rates of both sides,
their difference (candidate − baseline) and its interval:

- paired, when the sides share sessions (the replay design): over the matched sessions only,
  Newcombe's interval for a difference of paired proportions (his method 10, Wilson-based,
  with the φ correlation correction), and McNemar's exact test on the discordant pairs;
- two-sample otherwise: Newcombe's hybrid score interval (method 10 for independent ones).

A row regresses when the candidate is worse and the interval excludes zero; it improves
when the candidate is better and the interval excludes zero. One comparison per rule (a rule
has the same statuses at every gate it is evaluated at), one for the share of sessions clean
at their own gate and one for the fork-lifetime median make a family of m tests; intervals
are Bonferroni-simultaneous at 95% (each at 1 − 0.05/m), so that a candidate drawn from the
baseline's own rates flags nothing in at least 95% of replays rather than ~1 − 0.95^m.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

from pipeline.engine import connect, fetch_dicts
from pipeline.rules import GATES, load_rules
from pipeline.store import Out

FAMILY_ALPHA = 0.05


class SelectorError(Exception):
    """A selector that matches no run (the CLI prints it, exit 2)."""


@dataclass
class Row:
    metric: str  # a rule ID, "clean-share" or "fork-median-hours"
    gate: str
    paired: bool
    n_baseline: int
    n_candidate: int
    baseline: float | None = None
    candidate: float | None = None
    difference: float | None = None
    lower: float | None = None
    upper: float | None = None
    p_value: float | None = None
    verdict: str = "unchanged"  # regression, improvement or unchanged
    worse_when: str = "higher"


@dataclass
class Comparison:
    baseline: dict[str, str]
    candidate: dict[str, str]
    baseline_runs: list[str]
    candidate_runs: list[str]
    matched_sessions: int
    family_size: int
    confidence: float
    rows: list[Row] = field(default_factory=list)

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == "regression"]

    def as_json(self) -> dict[str, Any]:
        counts = {
            v: sum(r.verdict == v for r in self.rows)
            for v in ("regression", "improvement", "unchanged")
        }
        return {
            "baseline": {"labels": self.baseline, "runs": self.baseline_runs},
            "candidate": {"labels": self.candidate, "runs": self.candidate_runs},
            "matched_sessions": self.matched_sessions,
            "family_size": self.family_size,
            "confidence": self.confidence,
            "counts": counts,
            "rows": [asdict(r) for r in ordered(self.rows)],
        }


def ordered(rows: list[Row]) -> list[Row]:
    rank = {"regression": 0, "improvement": 1, "unchanged": 2}
    return sorted(
        rows,
        key=lambda r: (rank[r.verdict], r.metric, GATES.index(r.gate) if r.gate in GATES else 9),
    )


# ─────────────────────────── intervals and tests ───────────────────────────


def wilson(successes: int, n: int, z: float) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_unpaired(f1: int, n1: int, f2: int, n2: int, z: float) -> tuple[float, float, float]:
    """p2 − p1 with Newcombe's hybrid score interval (1998, method 10)."""
    p1, p2 = f1 / n1, f2 / n2
    l1, u1 = wilson(f1, n1, z)
    l2, u2 = wilson(f2, n2, z)
    d = p2 - p1
    return (
        d,
        d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2),
        d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2),
    )


def newcombe_paired(
    both: int, only_base: int, only_cand: int, neither: int, z: float
) -> tuple[float, float, float]:
    """p2 − p1 for paired binary outcomes with Newcombe's interval (1998, paired method 10).

    p1 is the baseline's failure rate (both + only_base)/n, p2 the candidate's.
    """
    a, b, c, d = both, only_base, only_cand, neither
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n, z)
    l2, u2 = wilson(a + c, n, z)
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    if denominator == 0:
        phi = 0.0
    else:
        cross: float = a * d - b * c
        # Newcombe's φ*: a positive association is shrunk by n/2 (and floored at 0).
        cross = max(cross - n / 2, 0.0) if cross > 0 else cross
        phi = cross / math.sqrt(denominator)
    diff = p2 - p1
    delta = math.sqrt(max((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0))
    epsilon = math.sqrt(max((u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2, 0.0))
    return diff, diff - delta, diff + epsilon


def mcnemar_exact(only_base: int, only_cand: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs at 1/2."""
    k, n = min(only_base, only_cand), only_base + only_cand
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2.0 * tail)


def verdict(diff: float | None, lower: float | None, upper: float | None, worse_when: str) -> str:
    if diff is None or lower is None or upper is None:
        return "unchanged"
    worse = diff > 0 if worse_when == "higher" else diff < 0
    if lower > 0 or upper < 0:
        return "regression" if worse else "improvement"
    return "unchanged"


# ─────────────────────────── data ───────────────────────────


def select_runs(con: Any, selector: dict[str, str]) -> list[str]:
    runs = con.execute("SELECT run_id, labels FROM runs ORDER BY run_id").fetchall()
    # `run_id=…` selects a run by its id, as --fail-on-regression does for the previous run.
    chosen = [
        r
        for r, labels in runs
        if all((r if k == "run_id" else (labels or {}).get(k)) == v for k, v in selector.items())
    ]
    if not chosen:
        known = sorted({f"{k}={v}" for _, labels in runs for k, v in (labels or {}).items()})
        wanted = " ".join(f"{k}={v}" for k, v in selector.items())
        raise SelectorError(
            f"no run has the labels {wanted}; labels in OUT: {', '.join(known) or 'none'}"
        )
    return chosen


_STATUSES = """
WITH latest AS (SELECT * FROM latest_in(?::VARCHAR[]))
SELECT l.session_key, s.stage, r.gate, r.rule_id, r.status
FROM latest l JOIN snapshots s USING (snapshot_id) JOIN rule_status r USING (snapshot_id)
"""


def _side(con: Any, runs: list[str]) -> dict[str, dict[tuple[str, str], str]]:
    """session_key → (gate, rule) → status, plus ("own", "clean") → 'fail'/'pass'."""
    sessions: dict[str, dict[tuple[str, str], str]] = {}
    own = {"open": "session", "converging": "manifest", "applied": "move", "harvested": "move"}
    for key, stage, gate, rule, status in con.execute(_STATUSES, [runs]).fetchall():
        statuses = sessions.setdefault(key, {})
        statuses[(gate, rule)] = status
        if gate == own[stage] and status == "fail":
            statuses[("own", "clean")] = "fail"
        statuses.setdefault(("own", "clean"), "pass")
    return sessions


def compare(out_path: str, baseline: dict[str, str], candidate: dict[str, str]) -> Comparison:
    out = Out(out_path)
    out.require()
    con = connect(out)
    base_runs, cand_runs = select_runs(con, baseline), select_runs(con, candidate)
    base, cand = _side(con, base_runs), _side(con, cand_runs)
    matched = sorted(set(base) & set(cand))
    paired = bool(matched)
    rules = load_rules()
    family = len(rules) + 2
    z = NormalDist().inv_cdf(1 - FAMILY_ALPHA / family / 2)
    result = Comparison(
        baseline, candidate, base_runs, cand_runs, len(matched), family, 1 - FAMILY_ALPHA / family
    )
    for rule in rules:
        # A rule's status does not depend on the gate, so its row at its own gate stands for
        # every later gate too (the same sessions, the same statuses).
        key = (rule.gate, rule.rule_id)
        result.rows.append(
            _binary_row(rule.rule_id, rule.gate, key, base, cand, matched, paired, z)
        )
    result.rows.append(
        _binary_row(
            "clean-share",
            "own",
            ("own", "clean"),
            base,
            cand,
            matched,
            paired,
            z,
            worse_when="lower",
        )
    )
    median = _median_row(out_path, baseline, candidate)
    if median is not None:
        result.rows.append(median)
    return result


def _binary_row(
    metric: str,
    gate: str,
    key: tuple[str, str],
    base: dict[str, dict[tuple[str, str], str]],
    cand: dict[str, dict[tuple[str, str], str]],
    matched: list[str],
    paired: bool,
    z: float,
    worse_when: str = "higher",
) -> Row:
    # For the clean share the "event" is being clean; for rules it is failing.
    event = "pass" if metric == "clean-share" else "fail"

    def hit(status: str) -> int:
        return int(status == event)

    if paired:
        pairs = [
            (base[k][key], cand[k][key])
            for k in matched
            if key in base[k] and key in cand[k] and "skipped" not in (base[k][key], cand[k][key])
        ]
        n = len(pairs)
        if n == 0:
            return Row(metric, gate, True, 0, 0, worse_when=worse_when)
        a = sum(hit(b) and hit(c) for b, c in pairs)
        only_base = sum(hit(b) and not hit(c) for b, c in pairs)
        only_cand = sum(hit(c) and not hit(b) for b, c in pairs)
        diff, lower, upper = newcombe_paired(
            a, only_base, only_cand, n - a - only_base - only_cand, z
        )
        row = Row(
            metric,
            gate,
            True,
            n,
            n,
            (a + only_base) / n,
            (a + only_cand) / n,
            diff,
            lower,
            upper,
            mcnemar_exact(only_base, only_cand),
            worse_when=worse_when,
        )
    else:
        b_statuses = [s[key] for s in base.values() if key in s and s[key] != "skipped"]
        c_statuses = [s[key] for s in cand.values() if key in s and s[key] != "skipped"]
        n1, n2 = len(b_statuses), len(c_statuses)
        if not n1 or not n2:
            return Row(metric, gate, False, n1, n2, worse_when=worse_when)
        f1, f2 = sum(map(hit, b_statuses)), sum(map(hit, c_statuses))
        diff, lower, upper = newcombe_unpaired(f1, n1, f2, n2, z)
        row = Row(
            metric, gate, False, n1, n2, f1 / n1, f2 / n2, diff, lower, upper, worse_when=worse_when
        )
    row.verdict = verdict(row.difference, row.lower, row.upper, worse_when)
    return row


def _median_row(out_path: str, baseline: dict[str, str], candidate: dict[str, str]) -> Row | None:
    """Fork-lifetime medians: a regression when the candidate's interval lies wholly above."""
    try:
        from pipeline.stats import compute
    except ImportError:
        return None
    summaries = []
    for selector in (baseline, candidate):
        labels = {k: v for k, v in selector.items() if k != "run_id"}
        result = compute(out_path, run_id=selector.get("run_id"), labels=labels)
        summaries.append(result["fork_lifetimes"]["overall"])
    b, c = summaries
    row = Row(
        "fork-median-hours",
        "own",
        False,
        b["estimated"],
        c["estimated"],
        b["median"],
        c["median"],
        None if b["median"] is None or c["median"] is None else c["median"] - b["median"],
        None,
        None,
    )
    if (
        b["median_upper"] is not None
        and c["median_lower"] is not None
        and c["median_lower"] > b["median_upper"]
    ):
        row.verdict = "regression"
    elif (
        c["median_upper"] is not None
        and b["median_lower"] is not None
        and c["median_upper"] < b["median_lower"]
    ):
        row.verdict = "improvement"
    return row


_FINDINGS = """
WITH latest AS (SELECT * FROM latest_in(?::VARCHAR[]))
SELECT l.session_key, l.repo_path, l.path, r.gate, r.rule_id, r.status, r.file, r.line, r.message
FROM latest l JOIN snapshots s USING (snapshot_id)
JOIN rule_results r ON r.snapshot_id = l.snapshot_id AND r.gate = own_gate(s.stage)
WHERE r.status IN ('fail', 'info')
"""


def findings_against_baseline(out_path: str, comparison: Comparison) -> list[dict[str, Any]]:
    """Candidate findings marked new or unchanged, and baseline-only ones marked absent."""
    con = connect(Out(out_path))

    def load(runs: list[str]) -> dict[tuple[Any, ...], dict[str, Any]]:
        rows = fetch_dicts(con, _FINDINGS, [runs])
        # Lines move as files grow; a finding is the same when its session, rule and file are.
        return {(r["session_key"], r["rule_id"], r["file"], r["message"]): r for r in rows}

    base, cand = load(comparison.baseline_runs), load(comparison.candidate_runs)
    marked = [
        {**row, "baselineState": "unchanged" if key in base else "new"} for key, row in cand.items()
    ]
    marked += [{**row, "baselineState": "absent"} for key, row in base.items() if key not in cand]
    return marked


def against_previous_run(out_path: str) -> Comparison | None:
    """The latest run against the one before it (for the scheduled census's alarm)."""
    runs = Out(out_path).committed_runs()
    if len(runs) < 2:
        return None
    return compare(out_path, {"run_id": runs[-2]}, {"run_id": runs[-1]})
