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

from pipeline.engine import connect
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


def _rows(con: Any, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cursor = con.execute(query, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


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


def build(
    out_path: str, html: str | None = None, worst_n: int = 25, issue_n: int = 200
) -> ReportSummary:
    """Render the report of the latest run in OUT to `html` (default OUT/report.html)."""
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    started = time.perf_counter()
    out = Out(out_path)
    out.require()
    con = connect(out)
    run = _rows(con, "SELECT * FROM runs ORDER BY run_id DESC LIMIT 1")[0]
    run_id = run["run_id"]
    descriptions = {r.rule_id: r.description for r in load_rules()}
    rates = _rows(con, "SELECT * FROM rule_rates WHERE run_id = ?", [run_id])
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
    stages = _rows(
        con,
        own
        + """
        SELECT stage, count(*) AS sessions, count(*) FILTER (WHERE failing = 0) AS clean
        FROM own GROUP BY stage
        ORDER BY list_position(['open', 'converging', 'applied', 'harvested'], stage)""",
        [run_id],
    )
    worst = _rows(
        con,
        own + " SELECT * FROM own WHERE failing > 0 ORDER BY failing DESC, repo, path LIMIT ?",
        [run_id, worst_n],
    )
    failing_sessions = _rows(
        con, own + " SELECT count(*) AS n FROM own WHERE failing > 0", [run_id]
    )[0]["n"]
    for s in worst:
        s["findings"] = _rows(
            con,
            "SELECT rule_id, file, line, message FROM rule_results "
            "WHERE snapshot_id = ? AND gate = ? AND status = 'fail' "
            "ORDER BY rule_id, line NULLS FIRST",
            [s["snapshot_id"], s["gate"]],
        )
    trend = _rows(con, "SELECT run_id, gate, rule_id, rate FROM rule_rates ORDER BY run_id")
    issue_query = """
        SELECT coalesce(o.repo || ' / ' || o.path, p.run_id) AS "where",
            p.file, p.line, p.code, p.message
        FROM parse_issues p
        LEFT JOIN (
            SELECT DISTINCT snapshot_id, repo, path FROM latest_observations WHERE run_id = ?
        ) o USING (snapshot_id)
        WHERE o.snapshot_id IS NOT NULL OR p.run_id = ?
    """
    issues = _rows(con, issue_query + " ORDER BY 1, 2, 3 LIMIT ?", [run_id, run_id, issue_n])
    issue_total = _rows(con, f"SELECT count(*) AS n FROM ({issue_query})", [run_id, run_id])[0]["n"]
    sessions = sum(s["sessions"] for s in stages)
    clean = sum(s["clean"] for s in stages)
    run.update(
        sessions=sessions,
        repos=_rows(
            con, "SELECT count(DISTINCT repo) AS n FROM observations WHERE run_id = ?", [run_id]
        )[0]["n"],
        clean_share=f"{clean / sessions:.0%}" if sessions else "–",
        runs_in_out=len(out.committed_runs()),
        labels=sorted((run["labels"] or {}).items()),
        parse_issues=issue_total,
    )
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
        charts=_charts(rates, stages, trend),
    )
    target = Path(html) if html else out.root / "report.html"
    temp = target.with_name(target.name + ".tmp")
    temp.write_text(page, encoding="utf-8")
    temp.replace(target)
    return ReportSummary(target, target.stat().st_size, time.perf_counter() - started)
