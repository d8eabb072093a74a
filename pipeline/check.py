"""`census check`: every rule at every gate for every stored snapshot, into rule_results."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Any

from pipeline.engine import connect, fetch_dicts, quote, write_database
from pipeline.rules import GATES, results_sql
from pipeline.schema import RULE_RESULTS
from pipeline.store import PARTITION, Out, new_run_id


@dataclass
class Rate:
    gate: str
    rule_id: str
    evaluated: int
    failed: int
    info: int
    skipped: int
    rate: float | None
    rate_lo: float | None
    rate_hi: float | None


@dataclass
class CheckSummary:
    run_id: str | None
    snapshots: int
    results: int
    seconds: float
    rates: list[Rate] = field(default_factory=list)


def evaluate(out: Out) -> tuple[int, int]:
    """Write rule_results for every snapshot; returns (snapshots, result rows)."""
    con = connect(out)
    check_id = new_run_id()
    staging = out.root / "staging" / f"check-{check_id}"
    staging.mkdir(parents=True, exist_ok=True)
    part = staging / "part-0.parquet"
    target = quote(part)
    con.execute(f"COPY ({results_sql()}) TO {target} (FORMAT parquet, COMPRESSION zstd)")
    rows = con.execute(f"SELECT count(*) FROM read_parquet({target})").fetchone()[0]
    snapshots = con.execute("SELECT count(*) FROM snapshots").fetchone()[0]
    folder = out.tables / RULE_RESULTS.name
    folder.mkdir(parents=True, exist_ok=True)
    os.replace(staging, folder / f"{PARTITION}={check_id}")
    # The new evaluation replaces every older one; results are per snapshot, so nothing is lost.
    for old in folder.glob(f"{PARTITION}=*"):
        if old.name != f"{PARTITION}={check_id}":
            shutil.rmtree(old, ignore_errors=True)
    return snapshots, rows


def rates(
    out: Out, run_id: str | None = None, gate: str | None = None
) -> tuple[str | None, list[Rate]]:
    """Failure rates for a run (default: the latest), at each session's own gate or at `gate`."""
    con = connect(out)
    if run_id is None:
        row = con.execute("SELECT max(run_id) FROM runs").fetchone()
        run_id = row[0] if row else None
    if run_id is None:
        return None, []
    if gate is None:
        query = (
            "SELECT gate, rule_id, evaluated, failed, info, skipped, rate, rate_lo, rate_hi "
            "FROM rule_rates WHERE run_id = ? ORDER BY gate, rule_id"
        )
        rows = con.execute(query, [run_id]).fetchall()
    else:
        rows = con.execute(_AT_GATE, [run_id, gate]).fetchall()
    ordered = sorted(rows, key=lambda r: (GATES.index(r[0]), r[1]))
    return run_id, [Rate(*r) for r in ordered]


# Rates at one asked gate for every session (not each at its own).
_AT_GATE = """
WITH c AS (
    SELECT r.gate, r.rule_id,
        count(*) FILTER (WHERE status IN ('pass', 'fail', 'info')) AS evaluated,
        count(*) FILTER (WHERE status = 'fail') AS failed,
        count(*) FILTER (WHERE status = 'info') AS info,
        count(*) FILTER (WHERE status = 'skipped') AS skipped
    FROM latest_observations o JOIN rule_status r USING (snapshot_id)
    WHERE o.run_id = ? AND r.gate = ?
    GROUP BY ALL
)
SELECT gate, rule_id, evaluated, failed, info, skipped, failed / nullif(evaluated, 0),
    wilson_lo(failed, evaluated), wilson_hi(failed, evaluated)
FROM c
"""


def check(out_path: str, gate: str | None = None) -> CheckSummary:
    started = time.perf_counter()
    out = Out(out_path)
    out.require()
    with out.lock():
        snapshots, rows = evaluate(out)
        write_database(out)
    run_id, found = rates(out, gate=gate)
    return CheckSummary(run_id, snapshots, rows, time.perf_counter() - started, found)


def findings(out: Out, run_id: str, gate: str | None = None) -> list[dict[str, Any]]:
    """Failing and info findings of a run's sessions (at their own gate, or at `gate`)."""
    con = connect(out)
    gate_sql = "?" if gate else "own_gate(s.stage)"
    query = f"""
        SELECT o.root, o.repo_path, o.path, o.session_key, o.snapshot_id, r.gate, r.rule_id,
            r.status, r.file, r.line, r.message
        FROM latest_observations o
        JOIN snapshots s USING (snapshot_id)
        JOIN rule_results r ON r.snapshot_id = o.snapshot_id AND r.gate = {gate_sql}
        WHERE o.run_id = ? AND r.status IN ('fail', 'info')
        ORDER BY o.root, o.repo_path, o.path, r.rule_id, r.line
    """
    # The gate placeholder comes first in the query text when given.
    params: list[Any] = ([gate] if gate else []) + [run_id]
    return fetch_dicts(con, query, params)
