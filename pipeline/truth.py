"""Checks a crawled, checked corpus against the generator's ground truth (truth.jsonl).

Used by the test suite on small corpora and by `python -m pipeline.bench truth` on large ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.engine import connect
from pipeline.store import Out
from pipeline.vocabulary import GATES, gate_includes

STATUSES = ("fail", "info", "skipped")


def load_truth(corpus: Path) -> dict[tuple[str, str], dict[str, Any]]:
    truth = {}
    with open(corpus / "truth.jsonl") as handle:
        for line in handle:
            item = json.loads(line)
            truth[(item["repo"], item["path"])] = item
    return truth


def observed_statuses(
    out: Out, point: str | None = None
) -> dict[tuple[str, str], dict[str, dict[str, str]]]:
    """(repo path, session path) → gate → rule → status, for a census point's sessions (the
    latest by default), every rule at every gate it is evaluated at."""
    con = connect(out)
    chosen = point or con.execute("SELECT max_by(point, position) FROM points").fetchone()[0]
    rows = con.execute(
        "SELECT repo_path, path, gate, rule_id, status FROM statuses WHERE point = ?", [chosen]
    ).fetchall()
    found: dict[tuple[str, str], dict[str, dict[str, str]]] = {}
    for repo_path, path, rule_gate, rule_id, status in rows:
        for gate in GATES:
            if gate_includes(gate, rule_gate):
                found.setdefault((repo_path, path), {}).setdefault(gate, {})[rule_id] = status
    return found


def by_status(statuses: dict[str, str]) -> dict[str, list[str]]:
    return {s: sorted(r for r, status in statuses.items() if status == s) for s in STATUSES}


def mismatches(
    truth: dict[tuple[str, str], dict[str, Any]],
    found: dict[tuple[str, str], dict[str, dict[str, str]]],
) -> list[str]:
    """Every session and gate whose fail/info/skipped sets differ from the truth, as text."""
    problems = []
    for key in sorted(set(truth) | set(found)):
        if key not in found:
            problems.append(f"{key}: in the truth but not crawled")
            continue
        if key not in truth:
            problems.append(f"{key}: crawled but not in the truth")
            continue
        for gate in GATES:
            want = {s: sorted(truth[key]["gates"][gate].get(s, [])) for s in STATUSES}
            got = by_status(found[key].get(gate, {}))
            if want != got:
                problems.append(f"{key} at {gate}: expected {want}, got {got}")
    return problems
