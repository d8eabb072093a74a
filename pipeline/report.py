"""`census report`: one self-contained HTML file (CSS, charts and script inline).

Charts are Vega-Lite specifications (Altair) rendered to inline SVG offline by
vl-convert, so the page loads nothing from anywhere. Templates (reports/) autoescape
every value: session text is shown, never run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.engine import connect, fetch_dicts
from pipeline.resources import reports_dir
from pipeline.rules import GATES, load_rules
from pipeline.store import Out

WORST_QUERY = (
    "SELECT o.repo, o.path, s.stage, count(DISTINCT r.rule_id) AS failing "
    "FROM latest_observations o JOIN snapshots s USING (snapshot_id) "
    "JOIN rule_status r ON r.snapshot_id = o.snapshot_id AND r.gate = own_gate(s.stage) "
    "WHERE o.run_id = (SELECT max(run_id) FROM runs) AND r.status = 'fail' "
    "GROUP BY ALL ORDER BY failing DESC"
)


@dataclass
class ReportSummary:
    path: Path
    bytes: int
    seconds: float


def _svg(chart: Any) -> str:
    import vl_convert

    svg: str = vl_convert.vegalite_to_svg(chart.to_dict())
    return svg


def _charts(
    rates: list[dict[str, Any]], stages: list[dict[str, Any]], trend: list[dict[str, Any]]
) -> dict[str, str]:
    import altair as alt
    import pandas as pd

    charts: dict[str, str] = {}
    stage_df = pd.DataFrame(stages or [{"stage": "none", "sessions": 0}])
    charts["stages"] = _svg(
        alt.Chart(stage_df, title="Sessions by stage")
        .mark_bar()
        .encode(
            x=alt.X("sessions:Q", title="sessions"),
            y=alt.Y("stage:N", title="stage", sort=["open", "converging", "applied", "harvested"]),
        )
        .properties(width=520, height=120)
    )
    rated = [r for r in rates if r["rate"] is not None]
    if rated:
        df = pd.DataFrame(
            [
                {
                    "rule": f"{r['rule_id']} @ {r['gate']}",
                    "rate": r["rate"] * 100,
                    "lo": r["rate_lo"] * 100,
                    "hi": r["rate_hi"] * 100,
                }
                for r in rated
            ]
        )
        base = alt.Chart(df, title="Failure rate per rule, with 95% Wilson interval")
        y = alt.Y("rule:N", title="rule @ gate", sort=alt.SortField("rate", order="descending"))
        bars = base.mark_bar(color="#d88a84").encode(
            x=alt.X("rate:Q", title="failure rate (%)", scale=alt.Scale(domain=[0, 100])), y=y
        )
        whiskers = base.mark_rule(color="#1d2330", strokeWidth=2).encode(x="lo:Q", x2="hi:Q", y=y)
        charts["rates"] = _svg(
            (bars + whiskers).properties(width=620, height=max(120, 16 * len(df)))
        )
    else:
        charts["rates"] = "<p class='muted'>Nothing evaluated yet.</p>"
    if trend:
        df = pd.DataFrame(
            [
                {"run": t["run_id"], "rule": t["rule_id"], "rate": t["rate"] * 100}
                for t in trend
                if t["rate"] is not None
            ]
        )
        charts["trend"] = _svg(
            alt.Chart(df, title="Failure rate per rule across runs")
            .mark_line(point=True)
            .encode(
                x=alt.X("run:N", title="run"),
                y=alt.Y("rate:Q", title="failure rate (%)"),
                color=alt.Color("rule:N", title="rule"),
            )
            .properties(width=620, height=260)
        )
    else:
        charts["trend"] = ""
    return charts


def _hours(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _lifetime_rows(lifetimes: dict[str, Any]) -> list[dict[str, Any]]:
    groups = [("all forks", lifetimes["overall"])]
    groups += [(f"close kind: {k}", v) for k, v in lifetimes["by_close_kind"].items()]
    groups += [(f"raised by {k}", v) for k, v in lifetimes["by_raised_by"].items()]
    groups += [(f"label {k}", v) for k, v in lifetimes["by_label"].items()]
    rows = []
    for name, g in groups:
        shares = {
            key: "–" if g["open_at"][key] is None else f"{g['open_at'][key]:.0%}"
            for key in ("1d", "7d", "30d")
        }
        if g["median"] is None:
            median = "not reached"
        else:
            upper = "not reached" if g["median_upper"] is None else _hours(g["median_upper"])
            median = f"{g['median']:.1f} ({_hours(g['median_lower'])} – {upper})"
        rows.append(
            {
                **g,
                "name": name,
                "median_text": median,
                "p25_text": "not reached" if g["p25"] is None else _hours(g["p25"]),
                "p75_text": "not reached" if g["p75"] is None else _hours(g["p75"]),
                "open_1d": shares["1d"],
                "open_7d": shares["7d"],
                "open_30d": shares["30d"],
            }
        )
    return rows


# Points drawn per survival curve: a step curve of thousands of closes looks the same with
# a few hundred, and the page stays small.
CURVE_POINTS = 400


def _thin(curve: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most CURVE_POINTS points of a curve, evenly by index, first and last kept."""
    if len(curve) <= CURVE_POINTS:
        return curve
    step = (len(curve) - 1) / (CURVE_POINTS - 1)
    return [curve[round(i * step)] for i in range(CURVE_POINTS)]


def _survival_chart(lifetimes: dict[str, Any]) -> str:
    import altair as alt
    import pandas as pd

    curves = [("all forks", lifetimes["overall"])]
    curves += [(f"close kind: {k}", v) for k, v in lifetimes["by_close_kind"].items()]
    rows = [
        {
            "curve": name,
            "hours": point["time"],
            "open": point["survival"],
            "lower": point["lower"],
            "upper": point["upper"],
        }
        for name, group in curves
        for point in _thin(group["curve"])
    ]
    if not rows:
        return "<p class='muted'>No fork has a known lifetime yet.</p>"
    df = pd.DataFrame(rows)
    band = (
        alt.Chart(df[df["curve"] == "all forks"])
        .mark_area(opacity=0.15, interpolate="step-after", color="#1d2330")
        .encode(x="hours:Q", y="lower:Q", y2="upper:Q")
    )
    lines = (
        alt.Chart(df)
        .mark_line(interpolate="step-after")
        .encode(
            x=alt.X("hours:Q", title="hours since the fork was raised"),
            y=alt.Y("open:Q", title="share of forks still open", scale=alt.Scale(domain=[0, 1])),
            color=alt.Color("curve:N", title="curve"),
        )
    )
    return _svg(
        (band + lines).properties(width=620, height=260, title="Fork survival (Kaplan–Meier)")
    )


def _comparison_view(
    out_path: str, baseline: dict[str, str], candidate: dict[str, str]
) -> dict[str, Any]:
    from pipeline.compare import compare, ordered

    result = compare(out_path, baseline, candidate)

    def show(value: float | None, hours: bool, signed: bool = False) -> str:
        if value is None:
            return "–"
        if hours:
            return f"{value:+.1f} h" if signed else f"{value:.1f} h"
        return f"{value:+.1%}" if signed else f"{value:.1%}"

    rows = []
    for r in ordered(result.rows):
        hours = r.metric == "fork-median-hours"
        interval = "–"
        if r.lower is not None and r.upper is not None:
            interval = f"{show(r.lower, hours, True)} … {show(r.upper, hours, True)}"
        rows.append(
            {
                **r.__dict__,
                "baseline_text": show(r.baseline, hours),
                "candidate_text": show(r.candidate, hours),
                "difference_text": show(r.difference, hours, True),
                "interval_text": interval,
            }
        )
    matched = result.matched_sessions
    return {
        "baseline_text": " ".join(f"{k}={v}" for k, v in baseline.items()),
        "candidate_text": " ".join(f"{k}={v}" for k, v in candidate.items()),
        "baseline_runs": result.baseline_runs,
        "candidate_runs": result.candidate_runs,
        "design": f"paired over {matched} sessions" if matched else "two-sample",
        "family_size": result.family_size,
        "counts": result.as_json()["counts"],
        "rows": rows,
    }


def build(
    out_path: str,
    html: str | None = None,
    worst_n: int = 25,
    issue_n: int = 200,
    baseline: dict[str, str] | None = None,
    candidate: dict[str, str] | None = None,
    open_forks_n: int = 50,
) -> ReportSummary:
    """Render the report of the latest run in OUT to `html` (default OUT/report.html)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    started = time.perf_counter()
    out = Out(out_path)
    out.require()
    con = connect(out)
    run = fetch_dicts(con, "SELECT * FROM runs ORDER BY run_id DESC LIMIT 1")[0]
    run_id = run["run_id"]
    descriptions = {r.rule_id: r.description for r in load_rules()}
    rates = fetch_dicts(con, "SELECT * FROM rule_rates WHERE run_id = ?", [run_id])
    rates.sort(key=lambda r: (GATES.index(r["gate"]), -(r["rate"] or 0), r["rule_id"]))
    for r in rates:
        r["description"] = descriptions.get(r["rule_id"], "")
        r["rate_text"] = "–" if r["rate"] is None else f"{r['rate']:.1%}"
        r["interval_text"] = (
            "–" if r["rate_lo"] is None else f"{r['rate_lo']:.1%} – {r['rate_hi']:.1%}"
        )
    own = """
        WITH own AS (
            SELECT o.session_key, o.repo, o.path, s.stage, own_gate(s.stage) AS gate, o.snapshot_id,
                count(DISTINCT r.rule_id) FILTER (WHERE r.status = 'fail') AS failing
            FROM latest_observations o JOIN snapshots s USING (snapshot_id)
            LEFT JOIN rule_status r ON r.snapshot_id = o.snapshot_id AND r.gate = own_gate(s.stage)
            WHERE o.run_id = ? GROUP BY ALL
        )"""
    stages = fetch_dicts(
        con,
        own
        + """
        SELECT stage, count(*) AS sessions, count(*) FILTER (WHERE failing = 0) AS clean
        FROM own GROUP BY stage
        ORDER BY list_position(['open', 'converging', 'applied', 'harvested'], stage)""",
        [run_id],
    )
    worst = fetch_dicts(
        con,
        own + " SELECT * FROM own WHERE failing > 0 ORDER BY failing DESC, repo, path LIMIT ?",
        [run_id, worst_n],
    )
    failing_sessions = fetch_dicts(
        con, own + " SELECT count(*) AS n FROM own WHERE failing > 0", [run_id]
    )[0]["n"]
    for s in worst:
        s["findings"] = fetch_dicts(
            con,
            "SELECT rule_id, file, line, message FROM rule_results "
            "WHERE snapshot_id = ? AND gate = ? AND status = 'fail' "
            "ORDER BY rule_id, line NULLS FIRST",
            [s["snapshot_id"], s["gate"]],
        )
    trend = fetch_dicts(con, "SELECT run_id, gate, rule_id, rate FROM rule_rates ORDER BY run_id")
    issue_query = """
        SELECT coalesce(o.repo || ' / ' || o.path, p.run_id) AS "where",
            p.file, p.line, p.code, p.message
        FROM parse_issues p
        LEFT JOIN (
            SELECT DISTINCT snapshot_id, repo, path FROM latest_observations WHERE run_id = ?
        ) o USING (snapshot_id)
        WHERE o.snapshot_id IS NOT NULL OR p.run_id = ?
    """
    issues = fetch_dicts(con, issue_query + " ORDER BY 1, 2, 3 LIMIT ?", [run_id, run_id, issue_n])
    issue_total = fetch_dicts(con, f"SELECT count(*) AS n FROM ({issue_query})", [run_id, run_id])[
        0
    ]["n"]
    sessions = sum(s["sessions"] for s in stages)
    clean = sum(s["clean"] for s in stages)
    run.update(
        sessions=sessions,
        repos=fetch_dicts(
            con, "SELECT count(DISTINCT repo) AS n FROM observations WHERE run_id = ?", [run_id]
        )[0]["n"],
        clean_share=f"{clean / sessions:.0%}" if sessions else "–",
        runs_in_out=len(out.committed_runs()),
        labels=sorted((run["labels"] or {}).items()),
        parse_issues=issue_total,
    )
    from pipeline.stats import compute

    stats = compute(out_path, run_id)
    lifetimes = stats["fork_lifetimes"]
    open_forks = fetch_dicts(
        con,
        """
        SELECT repo, topic, fork_id, title, raised_by, hours
        FROM fork_lifetimes WHERE censored ORDER BY hours DESC NULLS LAST, repo, topic, fork_id
        LIMIT ?
        """,
        [open_forks_n],
    )
    comparison = _comparison_view(out_path, baseline, candidate) if baseline and candidate else None
    charts = _charts(rates, stages, trend)
    charts["survival"] = _survival_chart(lifetimes)
    env = Environment(
        loader=FileSystemLoader(str(reports_dir())),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    page = env.get_template("census.html.j2").render(
        run=run,
        rates=rates,
        stages=stages,
        worst=worst,
        failing_sessions=failing_sessions,
        worst_query=WORST_QUERY,
        out_name=str(out_path),
        trend_runs=len({t["run_id"] for t in trend}),
        issues=issues,
        issue_total=issue_total,
        charts=charts,
        lifetimes=lifetimes,
        lifetime_rows=_lifetime_rows(lifetimes),
        open_forks=open_forks,
        sync_health=stats["sync_health"],
        idle=stats["idle"],
        compose_lag=stats["compose_lag"],
        hours=_hours,
        comparison=comparison,
    )
    target = Path(html) if html else out.root / "report.html"
    temp = target.with_name(target.name + ".tmp")
    temp.write_text(page, encoding="utf-8")
    temp.replace(target)
    return ReportSummary(target, target.stat().st_size, time.perf_counter() - started)
