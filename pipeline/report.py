"""`census report`: one self-contained HTML file for a census point (CSS, charts, script inline).

`gather` collects everything the page shows, in one place, from the views and the queries
in queries/report/ (plus stats, compare and alarms, which every command shares); `render`
only formats it with the templates in reports/, which autoescape every value: session text
is shown, never run. Charts are inline SVG (pipeline.charts), so the page loads nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline import alarms, charts
from pipeline.compare import CLEAN, Comparison, Selector, compare
from pipeline.engine import connect, fetch_dicts
from pipeline.resources import queries_dir, reports_dir
from pipeline.rules import load_rules
from pipeline.select import Point, previous
from pipeline.stats import Stats, compute
from pipeline.store import Out
from pipeline.textout import count_rate, interval, num, pct, plural

WORST_QUERY = (
    "SELECT repo, path, stage, failing_rules FROM sessions "
    "WHERE point = selected_point() AND failing_rules > 0 ORDER BY failing_rules DESC"
)
ISSUE_EXAMPLES = 5


@dataclass
class ReportSummary:
    path: Path
    bytes: int
    seconds: float


@dataclass
class ReportData:
    out_name: str
    point: Point
    previous: Point | None
    stats: Stats
    alarm: alarms.AlarmReport
    since: Comparison | None  # the previous point against this one (rules and clean share)
    session_changes: list[dict[str, Any]]
    fork_changes: list[dict[str, Any]]
    worst: list[dict[str, Any]]
    issues: list[dict[str, Any]]
    open_forks: list[dict[str, Any]]
    tiles: dict[str, str]
    comparison: Comparison | None = None
    charts: dict[str, str] = field(default_factory=dict)


def _query(name: str) -> str:
    return (queries_dir() / "report" / f"{name}.sql").read_text().strip().rstrip(";")


def gather(
    out_path: str,
    selector: Selector,
    worst_n: int = 25,
    baseline: Selector | None = None,
    candidate: Selector | None = None,
    threshold: float | None = None,
    metrics: list[str] | None = None,
) -> ReportData:
    """Everything the report shows for the selected census point."""
    out = Out(out_path)
    out.require()
    con = connect(out)
    stats = compute(out_path, selector.run, selector.labels)
    point = stats.point
    before = previous(con, point)
    alarm = alarms.evaluate(out_path, point.name, {}, None, threshold, metrics or [])
    since = compare(out_path, Selector(before.name), Selector(point.name)) if before else None
    at = {"point": point.name, "previous": before.name if before else ""}
    data = ReportData(
        str(out_path),
        point,
        before,
        stats,
        alarm,
        since,
        fetch_dicts(con, _query("session_changes"), at) if before else [],
        fetch_dicts(con, _query("fork_changes"), at) if before else [],
        _worst(con, point.name, worst_n),
        _issue_groups(con, point.name),
        fetch_dicts(con, _query("open_forks"), {"point": point.name, "limit": 50}),
        _tiles(con, stats),
    )
    if baseline is not None and candidate is not None:
        data.comparison = compare(out_path, baseline, candidate)
    moved = {r.metric for r in (since.rows if since else []) if r.verdict in _MOVED}
    data.charts = {
        "stages": charts.stages_chart(stats.stages, point.name),
        "rates": charts.rates_chart(stats.rule_rates),
        "trend": charts.trend_chart(stats.trend, stats.history, moved),
        "survival": charts.survival_chart(stats.fork_lifetimes),
    }
    return data


_MOVED = ("regression", "improvement")


def _worst(con: Any, point: str, limit: int) -> list[dict[str, Any]]:
    """The worst sessions, each with its findings (one query, not one per session)."""
    sessions: dict[tuple[str, str], dict[str, Any]] = {}
    for row in fetch_dicts(con, _query("worst"), {"point": point, "limit": limit}):
        key = (row["session_key"], row["path"])
        session = sessions.setdefault(
            key, {**{k: row[k] for k in ("repo", "path", "stage", "gate")}, "findings": []}
        )
        session["failing"] = row["failing_rules"]
        session["anchor"] = "s-" + row["session_key"][:12]
        session["findings"].append({k: row[k] for k in ("rule_id", "file", "line", "message")})
    return list(sessions.values())


def _issue_groups(con: Any, point: str) -> list[dict[str, Any]]:
    """Parse issues by code, most frequent first, with a few examples each."""
    groups: dict[str, dict[str, Any]] = {}
    params = {"point": point, "examples": ISSUE_EXAMPLES}
    for row in fetch_dicts(con, _query("parse_issues"), params):
        group = groups.setdefault(row["code"], {"code": row["code"], "count": row["issues"]})
        group.setdefault("examples", []).append(row)
    return list(groups.values())


def _tiles(con: Any, stats: Stats) -> dict[str, str]:
    row = fetch_dicts(
        con,
        "SELECT count(*) AS sessions, count(DISTINCT repo) AS repos, "
        "count(*) FILTER (WHERE clean) AS clean, count(*) FILTER (WHERE failing_rules > 0) "
        "AS failing FROM sessions WHERE point = $point",
        {"point": stats.point.name},
    )[0]
    share = row["clean"] / row["sessions"] if row["sessions"] else None
    return {
        "sessions": f"{row['sessions']:,}",
        "repositories": f"{row['repos']:,}",
        "clean at their own gate": pct(share, 0),
        "failing": f"{row['failing']:,}",
        "census points in OUT": str(len(stats.history)),
    }


def render(data: ReportData) -> str:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(str(reports_dir())),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(pct=pct, num=num, interval=interval, count_rate=count_rate, plural=plural)
    descriptions = {r.rule_id: r.description for r in load_rules()}
    return env.get_template("census.html.j2").render(
        d=data,
        descriptions=descriptions,
        worst_query=WORST_QUERY,
        clean_metric=CLEAN,
        moved=_MOVED,
    )


def build(
    out_path: str,
    html: str | None = None,
    worst_n: int = 25,
    selector: Selector | None = None,
    baseline: Selector | None = None,
    candidate: Selector | None = None,
    threshold: float | None = None,
    metrics: list[str] | None = None,
) -> ReportSummary:
    """Render a census point (the latest checked by default) to `html` (default
    OUT/report.html)."""
    started = time.perf_counter()
    data = gather(
        out_path, selector or Selector(), worst_n, baseline, candidate, threshold, metrics
    )
    page = render(data)
    target = Path(html) if html else Out(out_path).root / "report.html"
    temp = target.with_name(target.name + ".tmp")
    temp.write_text(page, encoding="utf-8")
    temp.replace(target)
    return ReportSummary(target, target.stat().st_size, time.perf_counter() - started)
