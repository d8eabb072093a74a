"""`census stats`: the statistics of spec §7, from the queries in queries/stats/ and a
Kaplan–Meier estimator of fork lifetimes.

`compute(out_path, run_id=None, labels=None)` returns one JSON-ready dict (timestamps as ISO
8601 strings ending in Z, every absent figure None); `format_text(result)` renders it as
aligned plain-text tables. docs/stats.md describes every key; so does this docstring.

Which runs
    scope        the committed runs whose labels include every `labels` pair (all runs when
                 `labels` is None or empty).
    run          `run_id` when given (it must be in scope), else the latest run in scope by
                 start time. Rule rates, sync health, compose lag and idle time are for this
                 run (each session's latest observation in it).
    history      the runs in scope that started no later than `run`. Stages, stage flows, the
                 trend and fork lifetimes use these: lifetimes need several snapshots.

Result keys
    out             OUT, as resolved.
    run             {run_id, started_at, labels, roots}.
    scope           {labels: the selector given, runs: the history's run ids in start order}.
    rule_rates      [{gate, rule_id, evaluated, failed, info, skipped, rate, rate_lo, rate_hi}]
                    for `run` (queries/stats/rule_rates.sql).
    fork_lifetimes  time from raise to close, in hours: {unit: "hours", overall,
                    by_close_kind: {resolved, parked}, by_raised_by: {kind: …},
                    by_label: {"k=v": …}}, each a lifetime summary (below).
    fork_syncs      the same, in reconciled syncs between raise and close (forks whose sync
                    log allows it; the others count as unknown). `open_at` is empty here.
    stages          [{run_id, started_at, stage, sessions}] for every history run.
    stage_flows     [{from_run, to_run, from_stage, to_stage, sessions}] between consecutive
                    history runs, matched by session_key; `absent` = not in that run.
    sync_health     [{gate, sessions, syncs, reconciled, failed, in_flight, unpaired, orphaned,
                    failed_share, latency_n, latency_p50_s, latency_p90_s, latency_max_s}],
                    the first row for gate `all`, then one per dispatch gate.
    compose_lag     [{stage, sessions, measured, stale, never_composed, lag_p50_hours,
                    lag_p90_hours, lag_max_hours}], the first row for stage `all`.
    idle            [{stage, sessions, measured, idle_p50_hours, idle_p90_hours,
                    idle_max_hours, idle_over_7d, idle_over_30d}], the first row for `all`.
    trend           [{run_id, started_at, gate, rule_id, evaluated, failed, info, skipped,
                    rate, rate_lo, rate_hi}] for every history run.

A lifetime summary
    forks        forks in the group.
    estimated    forks that enter the estimate (closes + censored + competing).
    closes       forks that closed (this way, for a close-kind group): the events.
    censored     forks still open in their session's latest snapshot (or that vanished
                 without a close): censored, never closed.
    competing    close-kind groups only: forks that closed the other way, censored at that
                 close (a cause-specific estimate); 0 elsewhere.
    unknown      forks with no lifetime (raise time unknown): counted, not estimated.
    median, median_lower, median_upper
                 the median time to close and its 95% confidence interval; None ("not
                 reached") where the curve, or the interval's band, never drops to 0.5.
    p25, p75     the times by which 25% and 75% of forks have closed (S(t) <= 0.75, 0.25);
                 None when not reached.
    open_at      {"1d", "7d", "30d"}: S(t), the share still open, at 24, 168 and 720 hours;
                 None when t is beyond the longest observed lifetime and the curve has not
                 reached 0 (not estimable there).
    curve        [{time, at_risk, events, censored, survival, lower, upper}]: the estimate at
                 0 and at every observed duration, with its pointwise 95% band.

The estimator
    Product-limit: at each distinct time t, S(t) = S(t-) * (1 - d/n) with n the forks at risk
    (duration >= t) and d the closes at t; at equal times closes come before censorings (a
    fork censored at t is still at risk at t). Greenwood's variance, with the log-log
    ("exponential Greenwood") pointwise band exp(-exp(log(-log S) ± z·se)), se =
    sqrt(Σ d/(n(n-d))) / |log S|, z = Φ⁻¹(0.975): this is lifelines' `confidence_interval_`.
    Quantile q: the first time with S(t) <= q, lifelines' `qth_survival_time`. Median CI:
    the first times at which the lower and the upper band drop to 0.5 or below — exactly
    lifelines' `median_survival_times(kmf.confidence_interval_)`, the inversion of the
    pointwise log-log test known as Brookmeyer–Crowley. One deliberate difference: S is
    compared with q allowing 1e-9 of rounding, so a curve that steps to exactly 0.5 reaches
    it (lifelines, summing logarithms, can land a hair above and report the next time).
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from statistics import NormalDist
from typing import Any

from pipeline.engine import connect
from pipeline.resources import queries_dir
from pipeline.store import Out

# The two-sided 95% normal quantile, as lifelines computes it (1.959963984540054).
Z95 = NormalDist().inv_cdf(0.975)
# Share-open checkpoints: key → hours.
OPEN_AT_HOURS: dict[str, float] = {"1d": 24.0, "7d": 168.0, "30d": 720.0}
CLOSE_KINDS = ("resolved", "parked")
# S(t) within this of a quantile counts as reaching it (rounding, not a statistical margin).
_EPS = 1e-9
NOT_REACHED = "not reached"


class StatsError(ValueError):
    """The runs asked for do not exist in OUT (an unknown run id, or labels no run carries)."""


# ---------------------------------------------------------------------------------------------
# Kaplan–Meier


@dataclass(frozen=True)
class Step:
    """The estimate at one time of the timeline (0 and every observed duration)."""

    time: float
    at_risk: int
    events: int
    censored: int
    survival: float
    lower: float
    upper: float


def kaplan_meier(durations: Sequence[float], events: Sequence[bool], z: float = Z95) -> list[Step]:
    """The product-limit estimate with its log-log Greenwood band, one Step per distinct time.

    The timeline starts at 0 (S = 1 unless something closes at 0), as lifelines' does.
    """
    if len(durations) != len(events):
        raise ValueError("durations and events differ in length")
    if any(d < 0 or math.isnan(d) for d in durations):
        raise ValueError("durations must be non-negative numbers")
    tally: dict[float, list[int]] = {0.0: [0, 0]}
    for duration, event in zip(durations, events, strict=True):
        counts = tally.setdefault(float(duration), [0, 0])
        counts[0 if event else 1] += 1
    at_risk = len(durations)
    survival = 1.0
    greenwood = 0.0
    steps: list[Step] = []
    for time in sorted(tally):
        closes, censored = tally[time]
        if closes:
            survival *= 1.0 - closes / at_risk
            if at_risk > closes:
                greenwood += closes / (at_risk * (at_risk - closes))
        lower, upper = _band(survival, greenwood, z)
        steps.append(Step(time, at_risk, closes, censored, survival, lower, upper))
        at_risk -= closes + censored
    return steps


def _band(survival: float, greenwood: float, z: float) -> tuple[float, float]:
    """The pointwise log-log ("exponential Greenwood") interval of S."""
    if survival >= 1.0:
        return 1.0, 1.0
    if survival <= 0.0:
        return 0.0, 0.0
    log_s = math.log(survival)
    theta = math.log(-log_s)
    se = math.sqrt(greenwood) / abs(log_s)
    return math.exp(-math.exp(theta + z * se)), math.exp(-math.exp(theta - z * se))


def quantile(steps: Sequence[Step], q: float, band: str = "survival") -> float | None:
    """The first time at which S (or its `lower`/`upper` band) is <= q; None if never."""
    for step in steps:
        if getattr(step, band) <= q + _EPS:
            return step.time
    return None


def survival_at(steps: Sequence[Step], t: float) -> float | None:
    """S(t) (right-continuous); None beyond the longest duration unless S already reached 0."""
    if not steps:
        return None
    last = steps[-1]
    if t > last.time:
        return 0.0 if last.survival <= 0.0 else None
    value = 1.0
    for step in steps:
        if step.time > t:
            break
        value = step.survival
    return value


def summarise(
    rows: Iterable[tuple[float | None, bool, bool]],
    open_at: dict[str, float] | None = None,
) -> dict[str, Any]:
    """A lifetime summary (see the module docstring) of (duration, event, competing) rows;
    a duration of None is a fork without a lifetime."""
    durations: list[float] = []
    events: list[bool] = []
    forks = closes = competing = censored = unknown = 0
    for duration, event, other in rows:
        forks += 1
        if duration is None:
            unknown += 1
            continue
        durations.append(duration)
        events.append(event)
        if event:
            closes += 1
        elif other:
            competing += 1
        else:
            censored += 1
    steps = kaplan_meier(durations, events) if durations else []
    return {
        "forks": forks,
        "estimated": len(durations),
        "closes": closes,
        "censored": censored,
        "competing": competing,
        "unknown": unknown,
        "median": quantile(steps, 0.5),
        "median_lower": quantile(steps, 0.5, "lower"),
        "median_upper": quantile(steps, 0.5, "upper"),
        "p25": quantile(steps, 0.75),
        "p75": quantile(steps, 0.25),
        "open_at": {k: survival_at(steps, t) for k, t in (open_at or {}).items()},
        "curve": [
            {
                "time": s.time,
                "at_risk": s.at_risk,
                "events": s.events,
                "censored": s.censored,
                "survival": s.survival,
                "lower": s.lower,
                "upper": s.upper,
            }
            for s in steps
        ],
    }


# ---------------------------------------------------------------------------------------------
# Queries


def query_sql(name: str) -> str:
    """The text of queries/stats/{name}.sql."""
    return (queries_dir() / "stats" / f"{name}.sql").read_text()


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return value


def run_query(con: Any, name: str, runs: Sequence[str]) -> list[dict[str, Any]]:
    """Run queries/stats/{name}.sql with its one parameter, the run ids; rows as dicts."""
    cursor = con.execute(query_sql(name), [list(runs)])
    names = [d[0] for d in cursor.description]
    return [{k: _plain(v) for k, v in zip(names, row, strict=True)} for row in cursor.fetchall()]


@dataclass(frozen=True)
class _Run:
    run_id: str
    started_at: datetime
    labels: dict[str, str]
    roots: list[str]


def _runs(con: Any) -> list[_Run]:
    rows = con.execute(
        "SELECT run_id, started_at, map_entries(labels), roots FROM runs "
        "ORDER BY started_at, run_id"
    ).fetchall()
    return [
        _Run(r[0], r[1], {e["key"]: e["value"] for e in (r[2] or [])}, list(r[3] or []))
        for r in rows
    ]


def _choose(
    runs: list[_Run], run_id: str | None, labels: dict[str, str]
) -> tuple[_Run | None, list[_Run]]:
    scope = [r for r in runs if all(r.labels.get(k) == v for k, v in labels.items())]
    if run_id is not None:
        chosen = next((r for r in runs if r.run_id == run_id), None)
        if chosen is None:
            raise StatsError(
                f'no run {run_id} in OUT; census sql "SELECT run_id FROM runs" lists them'
            )
        if chosen not in scope:
            wanted = ", ".join(f"{k}={v}" for k, v in labels.items())
            raise StatsError(f"run {run_id} does not carry the labels {wanted}")
    elif scope:
        chosen = scope[-1]
    elif labels:
        wanted = ", ".join(f"{k}={v}" for k, v in labels.items())
        raise StatsError(
            f"no run in OUT carries the labels {wanted}; "
            'census sql "SELECT run_id, labels FROM runs" lists them'
        )
    else:
        return None, []
    history = [r for r in scope if (r.started_at, r.run_id) <= (chosen.started_at, chosen.run_id)]
    return chosen, history


def _lifetimes(
    km_rows: list[dict[str, Any]], label_rows: dict[str, list[dict[str, Any]]], unit: str
) -> dict[str, Any]:
    column = "hours" if unit == "hours" else "syncs"
    open_at = OPEN_AT_HOURS if unit == "hours" else None

    def summary(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
        triples = (
            (
                None if r[column] is None else float(r[column]),
                bool(r["event"]),
                bool(r["competing"]),
            )
            for r in rows
        )
        return summarise(triples, open_at)

    def group(dimension: str, grp: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rows if r["dimension"] == dimension and r["grp"] == grp]

    raisers = sorted({r["grp"] for r in km_rows if r["dimension"] == "raised_by"})
    return {
        "unit": unit,
        "overall": summary(group("overall", "all", km_rows)),
        "by_close_kind": {k: summary(group("close_kind", k, km_rows)) for k in CLOSE_KINDS},
        "by_raised_by": {k: summary(group("raised_by", k, km_rows)) for k in raisers},
        "by_label": {
            pair: summary(group("overall", "all", rows)) for pair, rows in label_rows.items()
        },
    }


def compute(
    out_path: str, run_id: str | None = None, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    """Every statistic of spec §7 for OUT, as one JSON-ready dict (keys: module docstring)."""
    out = Out(out_path)
    out.require()
    con = connect(out)
    selector = dict(labels or {})
    chosen, history = _choose(_runs(con), run_id, selector)
    result: dict[str, Any] = {
        "out": str(out.root),
        "run": None,
        "scope": {"labels": selector, "runs": [r.run_id for r in history]},
    }
    one = [chosen.run_id] if chosen else []
    ids = [r.run_id for r in history]
    if chosen is not None:
        result["run"] = {
            "run_id": chosen.run_id,
            "started_at": _plain(chosen.started_at),
            "labels": chosen.labels,
            "roots": chosen.roots,
        }
    result["rule_rates"] = run_query(con, "rule_rates", one)
    km_rows = run_query(con, "fork_km", ids)
    label_rows: dict[str, list[dict[str, Any]]] = {}
    pairs = sorted({(k, v) for r in history for k, v in r.labels.items()})
    for key, value in pairs:
        carrying = [r.run_id for r in history if r.labels.get(key) == value]
        label_rows[f"{key}={value}"] = run_query(con, "fork_km", carrying)
    result["fork_lifetimes"] = _lifetimes(km_rows, label_rows, "hours")
    result["fork_syncs"] = _lifetimes(km_rows, label_rows, "syncs")
    result["stages"] = run_query(con, "stages", ids)
    result["stage_flows"] = run_query(con, "stage_flows", ids)
    result["sync_health"] = run_query(con, "sync_health", one)
    result["compose_lag"] = run_query(con, "compose_lag", one)
    result["idle"] = run_query(con, "idle", one)
    result["trend"] = run_query(con, "trend", ids)
    return result


# ---------------------------------------------------------------------------------------------
# Text

STAGES = ("open", "converging", "applied", "harvested")
# Stage-flow pairs and trend runs shown in text (the JSON holds them all).
TEXT_RUNS = 6


def _num(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{max(value, 0.0):.1%}"  # a Wilson bound of -1e-17 is 0


def _reach(summary: dict[str, Any], key: str) -> str:
    """A quantile as text: 'not reached' when the curve never gets there, '–' with no data."""
    if summary["estimated"] == 0:
        return "–"
    value = summary[key]
    return NOT_REACHED if value is None else _num(value)


def _table(title: str, columns: list[str], rows: list[list[str]]) -> Any:
    from rich import box
    from rich.table import Table

    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", pad_edge=False)
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    return table


def _groups(section: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    groups: list[tuple[str, dict[str, Any]]] = [("all forks", section["overall"])]
    groups += [(f"closed: {k}", v) for k, v in section["by_close_kind"].items()]
    groups += [(f"raised by: {k}", v) for k, v in section["by_raised_by"].items()]
    groups += [(f"label {k}", v) for k, v in section["by_label"].items()]
    return groups


def _lifetime_table(title: str, section: dict[str, Any]) -> Any:
    rows = []
    for name, s in _groups(section):
        ci = (
            "–"
            if s["estimated"] == 0
            else f"{_reach(s, 'median_lower')} – {_reach(s, 'median_upper')}"
        )
        rows.append(
            [
                name,
                str(s["forks"]),
                str(s["closes"]),
                str(s["censored"]),
                str(s["competing"]),
                str(s["unknown"]),
                _reach(s, "median"),
                ci,
                _reach(s, "p25"),
                _reach(s, "p75"),
            ]
        )
    columns = [
        "group",
        "forks",
        "closes",
        "censored",
        "competing",
        "unknown",
        "median",
        "median 95% CI",
        "p25",
        "p75",
    ]
    return _table(title, columns, rows)


def _open_table(section: dict[str, Any]) -> Any:
    rows = [
        [name, *(_pct(s["open_at"].get(k)) if s["estimated"] else "–" for k in OPEN_AT_HOURS)]
        for name, s in _groups(section)
    ]
    return _table(
        "Share still open, S(t) (– past the longest lifetime seen)",
        ["group", "after 1 day", "after 7 days", "after 30 days"],
        rows,
    )


def format_text(result: dict[str, Any], width: int = 140) -> str:
    """The result of `compute` as readable plain-text tables ('not reached' where a quantile
    is None because the curve never drops that far)."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width,
        color_system=None,
        force_terminal=False,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=False,
    )
    run = result["run"]
    if run is None:
        console.print("No runs in OUT.")
        return buffer.getvalue()
    labels = ", ".join(f"{k}={v}" for k, v in run["labels"].items()) or "none"
    console.print(f"Run {run['run_id']}, started {run['started_at']}, labels: {labels}")
    console.print(f"Roots: {', '.join(run['roots']) or '–'}")
    console.print(
        f"Lifetimes, stages and trend over {len(result['scope']['runs'])} run(s) up to this one."
    )
    console.print()
    console.print(
        _table(
            "Rule-failure rates (each session's latest observation, at its own gate)",
            ["gate", "rule", "evaluated", "failed", "info", "skipped", "rate", "95% CI"],
            [
                [
                    r["gate"],
                    r["rule_id"],
                    str(r["evaluated"]),
                    str(r["failed"]),
                    str(r["info"]),
                    str(r["skipped"]),
                    _pct(r["rate"]),
                    "–" if r["rate_lo"] is None else f"{_pct(r['rate_lo'])} – {_pct(r['rate_hi'])}",
                ]
                for r in result["rule_rates"]
            ],
        )
    )
    console.print(
        _lifetime_table(
            "Fork lifetime in hours, raise to close (Kaplan–Meier)", result["fork_lifetimes"]
        )
    )
    console.print(_open_table(result["fork_lifetimes"]))
    console.print(
        _lifetime_table(
            "Fork lifetime in reconciled syncs, raise to close (Kaplan–Meier)", result["fork_syncs"]
        )
    )
    per_run: dict[str, dict[str, int]] = {}
    for r in result["stages"]:
        per_run.setdefault(r["run_id"], {})[r["stage"]] = r["sessions"]
    console.print(
        _table(
            "Sessions by stage",
            ["run", *STAGES],
            [[rid, *(str(c.get(s, 0)) for s in STAGES)] for rid, c in per_run.items()][-TEXT_RUNS:],
        )
    )
    flows = result["stage_flows"]
    shown = list(dict.fromkeys((f["from_run"], f["to_run"]) for f in flows))[-TEXT_RUNS:]
    if shown:
        console.print(
            _table(
                "Stage flows between consecutive runs (absent: not in that run)",
                ["from run", "to run", "from stage", "to stage", "sessions"],
                [
                    [f["from_run"], f["to_run"], f["from_stage"], f["to_stage"], str(f["sessions"])]
                    for f in flows
                    if (f["from_run"], f["to_run"]) in shown
                ],
            )
        )
    console.print(
        _table(
            "Sync health (latency: dispatch to result, seconds)",
            [
                "gate",
                "sessions",
                "syncs",
                "reconciled",
                "failed",
                "in flight",
                "unpaired",
                "orphaned",
                "failed share",
                "p50",
                "p90",
                "max",
            ],
            [
                [
                    h["gate"],
                    str(h["sessions"]),
                    str(h["syncs"]),
                    str(h["reconciled"]),
                    str(h["failed"]),
                    str(h["in_flight"]),
                    str(h["unpaired"]),
                    str(h["orphaned"]),
                    _pct(h["failed_share"]),
                    _num(h["latency_p50_s"], 0),
                    _num(h["latency_p90_s"], 0),
                    _num(h["latency_max_s"], 0),
                ]
                for h in result["sync_health"]
            ],
        )
    )
    console.print(
        _table(
            "Compose lag, hours (newest turn minus Last compose; > 0 is stale)",
            ["stage", "sessions", "measured", "stale", "never composed", "p50", "p90", "max"],
            [
                [
                    c["stage"],
                    str(c["sessions"]),
                    str(c["measured"]),
                    str(c["stale"]),
                    str(c["never_composed"]),
                    _num(c["lag_p50_hours"], 2),
                    _num(c["lag_p90_hours"], 2),
                    _num(c["lag_max_hours"], 2),
                ]
                for c in result["compose_lag"]
            ],
        )
    )
    console.print(
        _table(
            "Idle in hours (run start minus content time)",
            ["stage", "sessions", "measured", "p50", "p90", "max", "over 7 days", "over 30 days"],
            [
                [
                    i["stage"],
                    str(i["sessions"]),
                    str(i["measured"]),
                    _num(i["idle_p50_hours"]),
                    _num(i["idle_p90_hours"]),
                    _num(i["idle_max_hours"]),
                    str(i["idle_over_7d"]),
                    str(i["idle_over_30d"]),
                ]
                for i in result["idle"]
            ],
        )
    )
    trend_runs = list(dict.fromkeys(t["run_id"] for t in result["trend"]))[-TEXT_RUNS:]
    if len(trend_runs) > 1:
        rates: dict[tuple[str, str], dict[str, float | None]] = {}
        for t in result["trend"]:
            if t["run_id"] in trend_runs:
                rates.setdefault((t["gate"], t["rule_id"]), {})[t["run_id"]] = t["rate"]
        console.print(
            _table(
                "Failure-rate trend (latest runs, oldest first)",
                ["gate · rule", *trend_runs],
                [
                    [f"{gate} · {rule}", *(_pct(v.get(rid)) for rid in trend_runs)]
                    for (gate, rule), v in rates.items()
                ],
            )
        )
    return buffer.getvalue()
