# ruff: noqa: E501  (each mutant is a verbatim fragment of the file it changes)
"""Mutation testing for the SQL and the vocabulary that every number users read comes from.

    python tools/sql_mutants.py               run every mutant, print killed/survived and the score
    python tools/sql_mutants.py --list        list the mutants
    python tools/sql_mutants.py --only ID …   run some of them

Each mutant is one textual change to one file (an operator, a constant, a status or gate
name, a sort order), the kind of slip a reviewer could miss. The script copies the checkout's
files (tracked and untracked, not ignored) to a temporary folder, checks that the chosen tests
pass there unchanged, then applies one mutant at a time to the copy, runs its tests
(`pytest -x -q`, in the copy, so the checkout itself is never touched) and restores the file.
A mutant is killed when a test fails, survives when all pass. Survivors and why each is
acceptable are recorded in docs/testing.md; a new survivor is a missing test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Tests per concern, fastest first (-x stops at the first failure).
MACRO_UNITS = [
    "tests/test_numbers.py::test_wilson_macro_at_z95_matches_newcombe_table_1",
    "tests/test_compare.py::test_unpaired_interval_matches_newcombe_1998_table_ii",
    "tests/test_compare.py::test_paired_interval_matches_an_independent_transcription",
    "tests/test_compare.py::test_wilson_hand_worked",
]
NUMBERS = ["tests/test_mutation_targets.py", "tests/test_numbers.py"]
RATES = [*MACRO_UNITS, *NUMBERS]
HISTORY = [
    "tests/test_stats.py::test_sync_pairs_unpaired_orphaned_and_health",
    "tests/test_stats.py::test_compute_end_to_end",
]
STATS = [*HISTORY, *NUMBERS]


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...] = tuple(RATES)


def m(id_: str, path: str, old: str, new: str, tests: list[str] | None = None) -> Mutant:
    return Mutant(id_, path, old, new, tuple(tests or RATES))


V = "pipeline/vocabulary.py"
MAC = "queries/views/05_macros.sql"
SES = "queries/views/20_sessions.sql"
RR = "queries/views/40_rule_rates.sql"
CMP = "queries/stats/compare.sql"
MUTANTS = [
    # The vocabulary: own gates, the denominator, z, cumulative gates.
    m("own-converging", V, '"converging": "manifest"', '"converging": "session"'),
    m("own-applied", V, '"applied": "move"', '"applied": "manifest"'),
    m("own-harvested", V, '"harvested": "move"', '"harvested": "manifest"'),
    m("evaluated+skipped", V, 'EVALUATED = ("pass", "fail", "info")',
      'EVALUATED = ("pass", "fail", "info", "skipped")'),
    m("evaluated-info", V, 'EVALUATED = ("pass", "fail", "info")', 'EVALUATED = ("pass", "fail")'),
    m("z95-1.645", V, "Z95 = NormalDist().inv_cdf(0.975)", "Z95 = 1.645"),
    m("gate-includes-<", V, "gate_rank(rule_gate) <= gate_rank(gate)",
      "gate_rank(rule_gate) < gate_rank(gate)"),
    m("gates-swapped", V, 'GATES = ("session", "manifest", "move")',
      'GATES = ("session", "move", "manifest")'),
    # The Wilson and Newcombe macros.
    m("wilson-lo-sign", MAC, "(k / n + z * z / (2 * n) - z * sqrt", "(k / n + z * z / (2 * n) + z * sqrt"),
    m("wilson-centre-4n", MAC, "(k / n + z * z / (2 * n) + z * sqrt",
      "(k / n + z * z / (4 * n) + z * sqrt"),
    m("wilson-denominator", MAC, "        / (1 + z * z / n))\n    END;\nCREATE OR REPLACE MACRO wilson_hi",
      "        / (1 + z / n))\n    END;\nCREATE OR REPLACE MACRO wilson_hi"),
    m("wilson-floor", MAC, "greatest(0.0,", "greatest(0.01,"),
    m("wilson-n>=0", MAC, "CASE WHEN n > 0 THEN least(1.0,", "CASE WHEN n >= 0 THEN least(1.0,"),
    m("newcombe-lo-plus", MAC, "f2 / n2 - f1 / n1 - sqrt((f2 / n2 - wilson_lo(f2, n2, z)) ^ 2",
      "f2 / n2 - f1 / n1 + sqrt((f2 / n2 - wilson_lo(f2, n2, z)) ^ 2"),
    m("newcombe-hi-term", MAC, "+ (f1 / n1 - wilson_lo(f1, n1, z)) ^ 2);",
      "+ (f1 / n1 - wilson_hi(f1, n1, z)) ^ 2);"),
    m("phi-shrink", MAC, "greatest(a * d - b * c - (a + b + c + d) / 2, 0.0)",
      "greatest(a * d - b * c, 0.0)"),
    m("phi->=", MAC, "ELSE CASE WHEN a * d - b * c > 0", "ELSE CASE WHEN a * d - b * c >= 0"),
    m("paired-lo-phi-sign", MAC, "        - 2 * newcombe_phi(a, b, c, d)\n            * ((a + c) / (a + b + c + d) - wilson_lo",
      "        + 2 * newcombe_phi(a, b, c, d)\n            * ((a + c) / (a + b + c + d) - wilson_lo"),
    # rule_rates.
    m("rr-failed-pass", RR, "count(*) FILTER (WHERE status = 'fail') AS failed,\n    count(*) FILTER (WHERE status = 'info') AS info,\n    count(*) FILTER (WHERE status = 'skipped') AS skipped\nFROM statuses\nWHERE own",
      "count(*) FILTER (WHERE status = 'pass') AS failed,\n    count(*) FILTER (WHERE status = 'info') AS info,\n    count(*) FILTER (WHERE status = 'skipped') AS skipped\nFROM statuses\nWHERE own"),
    m("rr-own-true", RR, "FROM statuses\nWHERE own\n", "FROM statuses\nWHERE true\n"),
    m("rr-z95-1.645", RR, "wilson_lo(c.failed, c.evaluated, z95()) AS rate_lo,\n    wilson_hi(c.failed, c.evaluated, z95())",
      "wilson_lo(c.failed, c.evaluated, 1.645) AS rate_lo,\n    wilson_hi(c.failed, c.evaluated, 1.645)"),
    m("rr-rate-denominator", RR, "c.failed / nullif(c.evaluated, 0) AS rate",
      "c.failed / nullif(c.evaluated + c.skipped, 0) AS rate"),
    m("rr-info-pass", RR, "count(*) FILTER (WHERE status = 'info') AS info,\n    count(*) FILTER (WHERE status = 'skipped') AS skipped\nFROM statuses\nWHERE own",
      "count(*) FILTER (WHERE status = 'pass') AS info,\n    count(*) FILTER (WHERE status = 'skipped') AS skipped\nFROM statuses\nWHERE own"),
    m("rr-skipped-fail", RR, "count(*) FILTER (WHERE status = 'skipped') AS skipped\nFROM statuses\nWHERE own",
      "count(*) FILTER (WHERE status = 'fail') AS skipped\nFROM statuses\nWHERE own"),
    m("rr-coalesce-1", RR, "coalesce(c.evaluated, 0) AS evaluated", "coalesce(c.evaluated, 1) AS evaluated", STATS),
    # statuses, findings, sessions.
    m("own-args-swapped", SES, "gate_includes(ps.gate, r.gate) AS own", "gate_includes(r.gate, ps.gate) AS own"),
    m("series-pass", SES, "CASE WHEN h.findings > 0 THEN 'fail'", "CASE WHEN h.findings > 0 THEN 'pass'",
      ["tests/test_history.py"]),
    m("clean-not-own", SES, "bool_and(status <> 'fail') FILTER (WHERE own) AS clean",
      "bool_and(status <> 'fail') AS clean"),
    m("failing-rules-info", SES, "FILTER (WHERE own AND status = 'fail') AS failing_rules",
      "FILTER (WHERE own AND status = 'info') AS failing_rules"),
    m("findings-no-info", SES, "WHERE r.status IN ('fail', 'info') AND gate_includes",
      "WHERE r.status IN ('fail') AND gate_includes", [*NUMBERS, "tests/test_cli.py"]),
    m("findings-any-gate", SES, "WHERE r.status IN ('fail', 'info') AND gate_includes(ps.gate, r.gate)",
      "WHERE r.status IN ('fail', 'info') AND true", [*NUMBERS, "tests/test_report_values.py"]),
    m("point-sessions-commits", SES, "FROM working_nodes n", "FROM history_nodes n",
      [*NUMBERS, "tests/test_history.py::test_series_findings_fail_the_session_at_its_census_point"]),
    # compare.sql.
    m("compare-not-own", CMP, "AND own AND is_evaluated(status)", "AND is_evaluated(status)"),
    m("compare-bool-and", CMP, "bool_or(status = 'fail') FILTER (WHERE point = $candidate)",
      "bool_and(status = 'pass') FILTER (WHERE point = $candidate)"),
    m("compare-discordant-swap", CMP, "count(*) FILTER (WHERE b_hit AND NOT c_hit) AS only_baseline",
      "count(*) FILTER (WHERE c_hit AND NOT b_hit) AS only_baseline"),
    m("compare-paired-unmatched", CMP, "coalesce(k.unmatched, 0) = 0 AND", "coalesce(k.unmatched, 0) <= 1 AND",
      [*RATES, "tests/test_compare.py::test_one_session_in_one_arm_only_makes_the_comparison_two_sample"]),
    # stats/*.sql: sync health, stages, idle, compose lag, trend.
    m("sync-p90", "queries/stats/sync_health.sql", "quantile_cont(latency_s, 0.9)", "quantile_cont(latency_s, 0.5)",
      [*STATS, "tests/test_report_values.py"]),
    m("sync-in-flight-newest", "queries/stats/sync_health.sql", "dispatch_line IS NOT NULL AND newest) AS in_flight",
      "dispatch_line IS NOT NULL AND NOT newest) AS in_flight", STATS),
    m("sync-failed-share", "queries/stats/sync_health.sql", "FILTER (WHERE result IS NOT NULL), 0)",
      "FILTER (WHERE result = 'reconciled'), 0)", STATS),
    m("stages-<", "queries/stats/stages.sql", "WHERE p.position <= (SELECT", "WHERE p.position < (SELECT", STATS),
    m("idle-sign", "queries/stats/idle.sql", "(epoch_ms(p.observed_at) - epoch_ms(s.content_time))",
      "(epoch_ms(s.content_time) - epoch_ms(p.observed_at))", STATS),
    m("lag-stale->", "queries/stats/compose_lag.sql", "FILTER (WHERE lag_hours >= 0) AS stale",
      "FILTER (WHERE lag_hours > 0) AS stale", STATS),
    m("trend-<", "queries/stats/trend.sql", "WHERE r.position <= (SELECT", "WHERE r.position < (SELECT", STATS),
    m("lifetimes-competing", "queries/stats/lifetimes_input.sql", "'competing': coalesce(l.close_kind <> 'resolved', false)",
      "'competing': coalesce(l.close_kind = 'resolved', false)", STATS),
    # The worst sessions, best first (inner selection and outer order).
    m("worst-inner-asc", "queries/report/worst.sql", "ORDER BY failing_rules DESC, repo, path",
      "ORDER BY failing_rules ASC, repo, path", NUMBERS),
    m("worst-outer-asc", "queries/report/worst.sql", "ORDER BY w.failing_rules DESC", "ORDER BY w.failing_rules ASC",
      NUMBERS),
]  # fmt: skip


def files_of_checkout() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [p for p in listed.split("\0") if p and (ROOT / p).is_file()]


def copy_checkout(target: Path) -> None:
    for rel in files_of_checkout():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target / rel, follow_symlinks=False)


def run_tests(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[bool, float, str]:
    """(passed, seconds, last lines) of `pytest -x -q tests` in the copy."""
    env = {**os.environ, "PYTHONPATH": str(copy)}
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return False, time.perf_counter() - started, "timed out (counted as killed)"
    tail = "\n".join(done.stdout.strip().splitlines()[-3:])
    return done.returncode == 0, time.perf_counter() - started, tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--only", nargs="+", metavar="ID", help="run only these mutants")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per mutant")
    ns = parser.parse_args(argv)
    chosen = [x for x in MUTANTS if not ns.only or x.id in ns.only]
    if ns.only and len(chosen) != len(set(ns.only)):
        parser.error(f"unknown mutant ids: {sorted(set(ns.only) - {x.id for x in MUTANTS})}")
    if ns.list:
        for x in chosen:
            print(f"{x.id:26} {x.path}: {x.old.splitlines()[0]!r} → {x.new.splitlines()[0]!r}")
        return 0
    for x in chosen:  # a mutant whose text is gone is stale: fail loudly, never skip it
        count = (ROOT / x.path).read_text().count(x.old)
        if count != 1:
            print(f"stale mutant {x.id}: its text occurs {count} times in {x.path}")
            return 2
    with tempfile.TemporaryDirectory(prefix="sql-mutants-") as tmp:
        copy = Path(tmp)
        copy_checkout(copy)
        baseline = sorted({t for x in chosen for t in x.tests})
        ok, seconds, tail = run_tests(copy, tuple(baseline), ns.timeout * 3)
        if not ok:
            print(f"the tests fail without any mutant ({seconds:.0f} s):\n{tail}")
            return 2
        print(f"unmutated: {len(baseline)} test selections pass ({seconds:.0f} s)")
        survived = []
        for x in chosen:
            target = copy / x.path
            original = target.read_text()
            try:
                target.write_text(original.replace(x.old, x.new))
                passed, seconds, tail = run_tests(copy, x.tests, ns.timeout)
            finally:
                target.write_text(original)
            verdict = "SURVIVED" if passed else "killed"
            print(
                f"{verdict:8} {x.id:26} {seconds:5.0f} s  {tail.splitlines()[-1] if tail else ''}"
            )
            sys.stdout.flush()
            if passed:
                survived.append(x.id)
    killed = len(chosen) - len(survived)
    print(f"\nscore: {killed}/{len(chosen)} killed ({100 * killed / len(chosen):.0f}%)")
    print("survived: " + (", ".join(survived) if survived else "none"))
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
