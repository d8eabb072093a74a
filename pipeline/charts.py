"""The report's charts: Vega-Lite specifications (Altair) rendered to inline SVG offline by
vl-convert. Each takes typed rows from pipeline.stats and returns SVG text.

They are drawn to stay readable at any size: one bar per rule with the axis fitted to the
data, the trend as small multiples (one panel per rule, x = census point by its label or
date), a palette that never repeats within one chart, and ticks that never overlap
(Vega's label-overlap removal on every axis).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pipeline.select import Point
from pipeline.stats import Lifetimes, RuleRate, StageCount, TrendRate
from pipeline.vocabulary import GATES, STAGES

# Twenty distinct colours (Tableau 20): enough for every rule of one chart to have its own.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
    "#a0cbe8",
    "#ffbe7d",
    "#ff9d9a",
    "#86bcb6",
    "#8cd17d",
    "#f1ce63",
    "#d4a6c8",
    "#fabfd2",
    "#d7b5a6",
    "#79706e",
)
INK = "#1d2330"
# Points of the survival curve drawn per group (stats thins the curve already).
SVG_FONT = "system-ui, sans-serif"


def svg(chart: Any) -> str:
    import vl_convert

    text: str = vl_convert.vegalite_to_svg(chart.to_dict())
    return text


def _config(chart: Any) -> Any:
    return chart.configure_axis(
        labelOverlap=True, labelFont=SVG_FONT, titleFont=SVG_FONT, labelLimit=0
    ).configure_view(stroke=None)


def point_label(point: Point) -> str:
    """A census point on an axis: its labels (a shard's left out), else its date and time."""
    words = " ".join(f"{v}" for k, v in sorted(point.labels.items()) if k != "shard")
    return words or f"{point.started_at:%m-%d %H:%M}"


def rates_chart(rates: Sequence[RuleRate]) -> str:
    """One bar per rule (its rate at each session's own gate) with its 95% interval."""
    import altair as alt
    import pandas as pd

    rated = [r for r in rates if r.rate is not None]
    if not rated:
        return "<p class='muted'>No rule was evaluated at this census point.</p>"
    df = pd.DataFrame(
        [
            {"rule": r.rule_id, "gate": r.gate, "rate": r.rate, "lo": r.rate_lo, "hi": r.rate_hi}
            for r in rated
        ]
    )
    top = min(1.0, max(0.05, float(df["hi"].max()) * 1.05))
    x_scale = alt.Scale(domain=[0, top], nice=False)
    y = alt.Y(
        "rule:N",
        title=None,
        sort=alt.SortField("rate", order="descending"),
        axis=alt.Axis(labelLimit=0),
    )
    base = alt.Chart(df)
    bars = base.mark_bar(opacity=0.85).encode(
        x=alt.X(
            "rate:Q",
            title="failure rate at each session's own gate",
            scale=x_scale,
            axis=alt.Axis(format=".0%", tickCount=6),
        ),
        y=y,
        color=alt.Color(
            "gate:N",
            scale=alt.Scale(domain=list(GATES), range=list(PALETTE[:3])),
            legend=alt.Legend(title="rule's gate", orient="bottom"),
        ),
        tooltip=["rule", "gate", alt.Tooltip("rate:Q", format=".1%")],
    )
    whiskers = base.mark_rule(color=INK, strokeWidth=1.5).encode(
        x=alt.X("lo:Q", scale=x_scale), x2="hi:Q", y=y
    )
    chart = (bars + whiskers).properties(width=640, height=18 * len(df))
    return svg(_config(chart))


def trend_chart(trend: Sequence[TrendRate], history: Sequence[Point], moved: set[str]) -> str:
    """Small multiples: each rule's rate (with its interval) at every census point; a rule that
    moved beyond its interval since the previous point has its panel title marked."""
    import altair as alt
    import pandas as pd

    labels = {p.name: point_label(p) for p in history}
    order = [labels[p.name] for p in history]
    rows = [
        {
            "rule": f"{t.rule_id} ▲▼" if t.rule_id in moved else t.rule_id,
            "point": labels.get(t.point, t.point),
            "rate": t.rate,
            "lo": t.rate_lo,
            "hi": t.rate_hi,
        }
        for t in trend
        if t.rate is not None
    ]
    if not rows:
        return "<p class='muted'>No rates yet.</p>"
    df = pd.DataFrame(rows)
    rules = sorted(df["rule"].unique())
    x = alt.X(
        "point:O",
        sort=order,
        title=None,
        axis=alt.Axis(labelAngle=-40, labelOverlap=True, labelLimit=90),
    )
    color = alt.Color("rule:N", scale=alt.Scale(domain=rules, range=list(PALETTE)), legend=None)
    base = alt.Chart(df)
    band = base.mark_area(opacity=0.18).encode(x=x, y="lo:Q", y2="hi:Q", color=color)
    line = base.mark_line(point=True, strokeWidth=2).encode(
        x=x, y=alt.Y("rate:Q", title=None, axis=alt.Axis(format=".0%", tickCount=4)), color=color
    )
    chart = (
        (band + line)
        .properties(width=170, height=90)
        .facet(facet=alt.Facet("rule:N", title=None, sort=rules), columns=4)
        .resolve_scale(y="independent")
    )
    return svg(_config(chart))


def survival_chart(lifetimes: Lifetimes) -> str:
    """Share of forks still open against hours since the raise (Kaplan–Meier), overall with its
    band, and by close kind."""
    import altair as alt
    import pandas as pd

    groups = [("all forks", lifetimes.overall)]
    groups += [(f"closed: {k}", v) for k, v in lifetimes.by_close_kind.items()]
    rows = [
        {"curve": name, "hours": p.time, "open": p.survival, "lower": p.lower, "upper": p.upper}
        for name, group in groups
        for p in group.curve
    ]
    if not rows:
        return "<p class='muted'>No fork has a known lifetime yet.</p>"
    df = pd.DataFrame(rows)
    names = [name for name, _ in groups]
    x = alt.X(
        "hours:Q",
        title="hours since the fork was raised",
        axis=alt.Axis(format="~s", tickCount=6, labelOverlap=True),
    )
    band = (
        alt.Chart(df[df["curve"] == "all forks"])
        .mark_area(opacity=0.15, interpolate="step-after", color=INK)
        .encode(x=x, y="lower:Q", y2="upper:Q")
    )
    lines = (
        alt.Chart(df)
        .mark_line(interpolate="step-after")
        .encode(
            x=x,
            y=alt.Y(
                "open:Q",
                title="share still open",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format=".0%"),
            ),
            color=alt.Color(
                "curve:N",
                scale=alt.Scale(domain=names, range=list(PALETTE[:3])),
                legend=alt.Legend(orient="bottom", title=None),
            ),
        )
    )
    return svg(_config((band + lines).properties(width=640, height=240)))


def stages_chart(stages: Sequence[StageCount], point: str) -> str:
    import altair as alt
    import pandas as pd

    rows = [{"stage": s.stage, "sessions": s.sessions} for s in stages if s.point == point]
    df = pd.DataFrame(rows or [{"stage": "open", "sessions": 0}])
    chart = (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("sessions:Q", title="sessions", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("stage:N", title=None, sort=list(STAGES)),
            color=alt.Color(
                "stage:N",
                scale=alt.Scale(domain=list(STAGES), range=list(PALETTE[4:8])),
                legend=None,
            ),
        )
        .properties(width=520, height=110)
    )
    return svg(_config(chart))
