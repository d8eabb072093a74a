"""The census's words, defined once: stages, gates, which gate a stage works toward, statuses.

Every Python module imports these names, and every SQL file reads them through the macros
that `sql_macros()` generates from them (`own_gate`, `stage_rank`, `gate_rank`, …), so that
no mapping or order is spelled out anywhere else. The synthetic generator's oracle in
fixtures/ keeps its own copy on purpose: it checks the census and must share no code with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from statistics import NormalDist

# Stages in the order a session moves through them (spec §4).
STAGES = ("open", "converging", "applied", "harvested")
# Gates are cumulative: each includes the rules of the ones before it.
GATES = ("session", "manifest", "move")
# The gate each stage must pass: the one its rates are counted at (spec §4).
OWN_GATE = {"open": "session", "converging": "manifest", "applied": "move", "harvested": "move"}
# A rule result's status; the first three are in a rate's denominator (spec §7).
STATUSES = ("pass", "fail", "info", "skipped")
EVALUATED = ("pass", "fail", "info")
# state.md Status values, in the only order they may move (BS-STATE-01).
STATE_STATUSES = ("open", "stopping", "harvested")
MANIFEST_STATUSES = ("proposed", "approved", "applied")
LOCATIONS = ("research", "history")
# The two-sided 95% normal quantile (1.959963984540054), for every 95% interval.
Z95 = NormalDist().inv_cdf(0.975)
# Its one-sided miss, 1 − Φ(Z95) = 0.025: the exact bound where a survival curve falls to 0.
TAIL95 = NormalDist().cdf(-Z95)


def stage_of(location: str, status: str | None, manifest_status: str | None) -> str:
    """The furthest gate a snapshot works toward (spec §4)."""
    if location == "history":
        return "harvested"
    if manifest_status == "applied":
        return "applied"
    if status in ("stopping", "harvested"):
        return "converging"
    return "open"


def gate_includes(gate: str, rule_gate: str) -> bool:
    """Whether a rule of `rule_gate` is evaluated at `gate` (gates are cumulative)."""
    return GATES.index(rule_gate) <= GATES.index(gate)


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _case(argument: str, mapping: Iterable[tuple[str, str]]) -> str:
    whens = " ".join(f"WHEN {_quote(k)} THEN {v}" for k, v in mapping)
    return f"CASE {argument} {whens} END"


def _list(values: Iterable[str]) -> str:
    return "[" + ", ".join(_quote(v) for v in values) + "]"


def sql_macros() -> list[str]:
    """DuckDB macros that carry this module's vocabulary into SQL."""
    return [
        f"CREATE OR REPLACE MACRO own_gate(stage) AS "
        f"{_case('stage', ((s, _quote(g)) for s, g in OWN_GATE.items()))}",
        f"CREATE OR REPLACE MACRO stage_rank(stage) AS list_position({_list(STAGES)}, stage)",
        f"CREATE OR REPLACE MACRO gate_rank(gate) AS list_position({_list(GATES)}, gate)",
        f"CREATE OR REPLACE MACRO state_rank(status) AS "
        f"list_position({_list(STATE_STATUSES)}, status)",
        f"CREATE OR REPLACE MACRO flow_rank(stage) AS "
        f"list_position({_list(('absent', *STAGES))}, stage)",
        f"CREATE OR REPLACE MACRO is_evaluated(status) AS "
        f"list_contains({_list(EVALUATED)}, status)",
        # A rule of rule_gate is evaluated at gate (cumulative gates).
        "CREATE OR REPLACE MACRO gate_includes(gate, rule_gate) AS "
        "gate_rank(rule_gate) <= gate_rank(gate)",
        f"CREATE OR REPLACE MACRO valid_state(status) AS "
        f"list_contains({_list(STATE_STATUSES)}, status)",
        f"CREATE OR REPLACE MACRO valid_manifest_status(status) AS "
        f"list_contains({_list(MANIFEST_STATUSES)}, status)",
        f"CREATE OR REPLACE MACRO z95() AS {Z95!r}",
        "CREATE OR REPLACE VIEW gates AS SELECT * FROM (VALUES "
        + ", ".join(f"({_quote(g)}, {i})" for i, g in enumerate(GATES, 1))
        + ") AS t(gate, gate_rank)",
        "CREATE OR REPLACE VIEW stages AS SELECT * FROM (VALUES "
        + ", ".join(f"({_quote(s)}, {i}, {_quote(OWN_GATE[s])})" for i, s in enumerate(STAGES, 1))
        + ") AS t(stage, stage_rank, own_gate)",
    ]


# What --fail-on-regression watches when given no metrics, and what the report's alarms watch
# when not told otherwise: every rule's rate. One default, so that the page and the exit code
# of `check` and of `report` agree on a point.
REGRESSION_DEFAULT = "rules"
