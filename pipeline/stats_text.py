"""`census stats` as text: one small renderer per section, all through pipeline.textout."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

from pipeline.stats import Lifetime, Lifetimes, Stats
from pipeline.textout import DASH, console, count_rate, interval, num, pct, reached, table
from pipeline.visible import visible
from pipeline.vocabulary import STAGES

# Census points shown in the stage-flow and trend tables (the JSON holds them all).
TEXT_POINTS = 6


def format_text(stats: Stats) -> str:
    from rich.text import Text

    buffer = io.StringIO()
    out = console(file=buffer)
    title = f"Census point {stats.point.title}; {len(stats.history)} point(s) in its history"
    out.print(Text(visible(title)))  # text, not markup: a label may hold brackets
    sections: Sequence[Callable[[Stats], Any]] = (
        _rates,
        lambda s: _lifetime_table("Fork lifetime in hours, raise to close", s.fork_lifetimes),
        lambda s: _open_table(s.fork_lifetimes),
        lambda s: _lifetime_table("Fork lifetime in reconciled syncs", s.fork_syncs),
        _stages,
        _flows,
        _sync,
        _lag,
        _idle,
        _trend,
    )
    for section in sections:
        rendered = section(stats)
        if rendered is not None:
            out.print(rendered)
    return buffer.getvalue()


def _rates(stats: Stats) -> Any:
    return table(
        "Rule-failure rates at each session's own gate (failed/evaluated, 95% Wilson interval)",
        ["rule", "gate", "failed/evaluated", "95% interval", "info", "skipped"],
        [
            [
                r.rule_id,
                r.gate,
                count_rate(r.failed, r.evaluated, r.rate),
                interval(r.rate_lo, r.rate_hi),
                str(r.info),
                str(r.skipped),
            ]
            for r in stats.rule_rates
        ],
    )


def reach_text(summary: Lifetime, value: float | None) -> str:
    """A lifetime group's median, quartile or interval end as stats and the report show it."""
    if summary.estimated == 0:
        return DASH
    return reached(value)


def censored_text(g: Lifetime) -> str:
    """Forks the estimate censors: in a close-kind group those closed the other way are too,
    named apart so the figure reads as the JSON's `censored` and `competing`."""
    total = f"{g.censored + g.competing:,}"
    return f"{total} ({g.competing:,} competing)" if g.competing else total


def _lifetime_table(title: str, section: Lifetimes) -> Any:
    rows = []
    for name, g in section.groups():
        median = reach_text(g, g.median)
        if g.estimated:
            median += f" ({reach_text(g, g.median_lower)} – {reach_text(g, g.median_upper)})"
        counts = [str(g.forks), str(g.closes), censored_text(g), str(g.unknown)]
        rows.append([name, *counts, median, reach_text(g, g.p25), reach_text(g, g.p75)])
    columns = ["group", "forks", "closes", "censored", "unknown", "median (95% CI)", "p25", "p75"]
    return table(f"{title} (Kaplan–Meier)", columns, rows)


def _open_table(section: Lifetimes) -> Any:
    rows = [
        [name, *(pct(g.open_at.get(k), 0) for k in ("1d", "7d", "30d"))]
        for name, g in section.groups()
    ]
    return table("Share of forks still open", ["group", "1 day", "7 days", "30 days"], rows)


def _stages(stats: Stats) -> Any:
    per_point: dict[str, dict[str, int]] = {}
    for s in stats.stages:
        per_point.setdefault(s.point, {})[s.stage] = s.sessions
    rows = [[p, *(str(c.get(s, 0)) for s in STAGES)] for p, c in per_point.items()]
    return table("Sessions by stage", ["census point", *STAGES], rows[-TEXT_POINTS:])


def _flows(stats: Stats) -> Any:
    pairs = list(dict.fromkeys((f.from_point, f.to_point) for f in stats.stage_flows))
    shown = set(pairs[-TEXT_POINTS:])
    rows = [
        [f.from_point, f.to_point, f.from_stage, f.to_stage, str(f.sessions)]
        for f in stats.stage_flows
        if (f.from_point, f.to_point) in shown
    ]
    if not rows:
        return None
    columns = ["from point", "to point", "from stage", "to stage", "sessions"]
    return table("Stage flows between census points (absent: not there)", columns, rows, keys=2)


def _sync(stats: Stats) -> Any:
    columns = ["gate", "sessions", "syncs", "reconciled", "failed", "in flight", "unpaired"]
    columns += ["unread", "orphaned", "misfiled", "failed share", "p50", "p90", "max"]
    rows = [
        [
            h.gate,
            *(str(v) for v in (h.sessions, h.syncs, h.reconciled, h.failed, h.in_flight)),
            str(h.unpaired),
            str(h.unread),
            str(h.orphaned),
            str(h.misfiled),
            pct(h.failed_share),
            *(num(v, 0) for v in (h.latency_p50_s, h.latency_p90_s, h.latency_max_s)),
        ]
        for h in stats.sync_health
    ]
    return table("Sync health (latency: dispatch to result, seconds)", columns, rows)


def _lag(stats: Stats) -> Any:
    columns = ["stage", "sessions", "measured", "stale", "never composed", "p50", "p90", "max"]
    rows = [
        [c.stage, str(c.sessions), str(c.measured), str(c.stale), str(c.never_composed)]
        + [num(v, 2) for v in (c.lag_p50_hours, c.lag_p90_hours, c.lag_max_hours)]
        for c in stats.compose_lag
    ]
    return table(
        "Compose lag, hours (newest turn minus Last compose; ≥ 0, a time not read, or never "
        "composed beside turns, is stale)",
        columns,
        rows,
    )


def _idle(stats: Stats) -> Any:
    columns = ["stage", "sessions", "measured", "p50", "p90", "max", "over 7 days", "over 30 days"]
    rows = [
        [i.stage, str(i.sessions), str(i.measured)]
        + [num(v) for v in (i.idle_p50_hours, i.idle_p90_hours, i.idle_max_hours)]
        + [str(i.idle_over_7d), str(i.idle_over_30d)]
        for i in stats.idle
    ]
    return table("Idle in hours (seen minus content time)", columns, rows)


def _trend(stats: Stats) -> Any:
    titles = {p.name: p.title for p in stats.history}
    if len(set(titles.values())) < len(titles):
        # Two points with one label in one minute read alike: their position tells them apart.
        titles = {p.name: f"{p.title} #{p.position}" for p in stats.history}
    points = list(dict.fromkeys(t.point for t in stats.trend))[-TEXT_POINTS:]
    if len(points) < 2:
        return None
    rates: dict[str, dict[str, float | None]] = {}
    for t in stats.trend:
        if t.point in points:
            rates.setdefault(t.rule_id, {})[t.point] = t.rate
    header = [titles.get(p, p) for p in points]
    rows = [[rule, *(pct(v.get(p)) for p in points)] for rule, v in rates.items()]
    return table("Failure-rate trend, oldest first", ["rule", *header], rows)
