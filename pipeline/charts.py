"""The report's charts: Vega-Lite specifications (Altair) rendered to inline SVG offline by
vl-convert. Each takes typed rows from pipeline.stats and returns a `Chart`: the SVG text and
the name of the field its colours stand for.

Drawn to stay readable from one night to many and from one rule to every rule:

- rates: one bar per rule at each rule's own gate, sorted by rate, the axis fitted to the
  highest interval bound, the 95% interval drawn over each bar and the rate written beside it;
- trend: small multiples, one panel per rule (the rules that moved since the previous census
  point first, their titles marked), x = census point labelled by its label or date;
- colours: within one chart every category has its own colour (`palette`), never reused;
- ticks: Vega's label-overlap removal on every axis with a separation, horizontal labels, and
  a number format with no thousands run-on ("7.5k", not "7,5008,000").

Every mark carries its fields in its aria-label (Vega's default), so the browser test can tell
which colour stands for which category.
"""

from __future__ import annotations

import colorsys
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pipeline.select import Point
from pipeline.stats import Lifetimes, RuleRate, StageCount, TrendRate
from pipeline.textout import pct
from pipeline.visible import visible
from pipeline.vocabulary import GATES, STAGES

# Twenty colours, each distinct and dark enough to read as a thin line on white.
PALETTE = (
    "#2f6db5",  # blue
    "#e08a1e",  # orange
    "#7a4fb5",  # violet
    "#1b8f94",  # teal
    "#d1495b",  # rose
    "#2e9e5b",  # green
    "#a0522d",  # sienna
    "#c4407f",  # magenta
    "#6b7a1e",  # olive
    "#4a4f5c",  # slate
    "#5fa3e0",  # sky
    "#e8675c",  # salmon
    "#74b84a",  # leaf
    "#c99a12",  # mustard
    "#a27ad6",  # lavender
    "#3fb8b0",  # aqua
    "#8a3b12",  # rust
    "#e07fb0",  # pink
    "#26476b",  # navy
    "#9a8f7a",  # taupe
)
INK = "#1d2330"
WORSE = "#b3261e"
BETTER = "#1b6e3a"
FONT = "DejaVu Sans, Verdana, sans-serif"
# Pixels between two tick labels before Vega drops one (room for a wider font in the viewer's
# browser than the one vl-convert measured with).
LABEL_SEPARATION = 6
# The trend's panels: width and height in pixels, and panels per row (1,280 px wide pages).
TREND_PANEL = (168, 80)
TREND_COLUMNS = 5
# How a rule that moved since the previous census point is marked in a chart.
MARKS = {"worse": " ▲ worse", "better": " ▼ better"}
# The width of one character of an 11 px label, generously (DejaVu Sans averages about 6.5).
CHAR_PX = 7.0
ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


@dataclass(frozen=True)
class Chart:
    svg: str  # inline SVG, or a short HTML note when there is nothing to draw
    series: str = ""  # the field whose values the colours stand for ("" when not a chart)


def palette(n: int) -> list[str]:
    """n distinct colours: PALETTE's, then evenly spaced hues for more than twenty."""
    if n <= len(PALETTE):
        return list(PALETTE[:n])
    colours = list(PALETTE)
    extra = n - len(PALETTE)
    for i in range(extra):
        r, g, b = colorsys.hls_to_rgb((i + 0.5) / extra, 0.42, 0.6)
        colour = f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
        colours.append(colour if colour not in colours else f"#{i:06x}")
    return colours


def warm_up() -> threading.Thread:
    """Start vl-convert's JavaScript engine in the background (it takes most of a second and
    releases the GIL), so that it is ready when the data for the charts is."""

    def start() -> None:
        import vl_convert

        vl_convert.vegalite_to_svg({"mark": "point", "data": {"values": []}})

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    return thread


def svg(chart: Any) -> str:
    import vl_convert

    text: str = vl_convert.vegalite_to_svg(chart.to_dict())
    return text


def _config(chart: Any) -> Any:
    return (
        chart.configure(font=FONT)
        .configure_axis(
            labelOverlap=True,
            labelSeparation=LABEL_SEPARATION,
            labelFont=FONT,
            titleFont=FONT,
            labelFontSize=11,
            titleFontSize=11,
            labelColor=INK,
            titleColor=INK,
        )
        .configure_legend(labelFont=FONT, titleFont=FONT, labelFontSize=11, titleFontSize=11)
        .configure_header(labelFont=FONT, titleFont=FONT)
        .configure_view(stroke=None)
    )


def _note(text: str) -> Chart:
    return Chart(f"<p class='muted'>{text}</p>")


def short_date(text: str) -> str:
    """'2026-11-24' → 'Nov 24'; any other text unchanged."""
    found = ISO_DATE.fullmatch(text)
    if not found:
        return text
    year, month, day = (int(g) for g in found.groups())
    return f"{datetime(year, month, day):%b} {day}"


def point_labels(points: Sequence[Point]) -> dict[str, str]:
    """Each census point's name on an axis: its labels (a shard's left out, a date shortened),
    else the name given with --point (as the page's sentences call it), else its start date;
    the time, then the position, are added where two would read alike."""
    from pipeline.store import RUN_ID_RE

    labels = {}
    for p in points:
        words = " ".join(short_date(v) for k, v in sorted(p.labels.items()) if k != "shard")
        named = short_date(p.name) if not RUN_ID_RE.fullmatch(p.name) else ""
        # A control character (a label `model=m\x1b[31m1`) made vl-convert panic, the process
        # aborted and no report was written (found by a hunt): written out as an escape.
        labels[p.name] = visible(words or named or short_date(f"{p.started_at:%Y-%m-%d}"))
    if len(set(labels.values())) < len(labels):
        labels = {p.name: f"{labels[p.name]} {p.started_at:%H:%M}" for p in points}
    if len(set(labels.values())) < len(labels):
        labels = {p.name: f"{labels[p.name]} #{p.position}" for p in points}
    return labels


def point_label(point: Point) -> str:
    return point_labels([point])[point.name]


def point_phrases(points: Sequence[Point]) -> dict[str, str]:
    """Each census point's name in the page's sentences ("What changed since …?"): the name
    given with --point (a date shortened), else its labels as k=v (a bare "4" reads as a
    number), else its start date; the time, then the position, are added where two of the
    points read alike (two nights on one day)."""
    from pipeline.select import labels_text
    from pipeline.store import RUN_ID_RE

    phrases = {}
    for p in points:
        labels = {k: short_date(v) for k, v in p.labels.items() if k != "shard"}
        named = not RUN_ID_RE.fullmatch(p.name)
        day = short_date(f"{p.started_at:%Y-%m-%d}")
        phrases[p.name] = short_date(p.name) if named else labels_text(labels) or day
    if len(set(phrases.values())) < len(phrases):
        phrases = {p.name: f"{phrases[p.name]} {p.started_at:%H:%M}" for p in points}
    if len(set(phrases.values())) < len(phrases):
        phrases = {p.name: f"{phrases[p.name]} #{p.position}" for p in points}
    return phrases


def _rate_rows(rated: Sequence[RuleRate], moved: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "rule": r.rule_id,
            "gate": r.gate,
            "rate": r.rate,
            "lo": r.rate_lo,
            "hi": r.rate_hi,
            "text": f"{pct(r.rate)} ({r.failed:,}/{r.evaluated:,})"
            + MARKS.get(moved.get(r.rule_id, ""), ""),
        }
        for r in rated
    ]


def _rule_axis(moved: dict[str, str]) -> Any:
    """Rule IDs in full (never cut); the rules that moved since the previous point in bold."""
    import altair as alt

    if not moved:
        return alt.Axis(labelLimit=0)
    names = ", ".join(repr(rule) for rule in sorted(moved))
    test = f"indexof([{names}], datum.value) >= 0"
    return alt.Axis(
        labelLimit=0, labelFontWeight={"condition": {"test": test, "value": "bold"}, "value": 400}
    )


def rates_chart(rates: Sequence[RuleRate], moved: dict[str, str] | None = None) -> Chart:
    """One bar per rule (its rate over the sessions at whose own gate it is evaluated), coloured
    by that gate, highest first, with its 95% interval and, beside it, its rate, failed/evaluated
    and ▲ worse or ▼ better for the rules that moved since the previous point (also in bold)."""
    import altair as alt

    rated = sorted(
        (r for r in rates if r.rate is not None), key=lambda r: (-(r.rate or 0), r.rule_id)
    )
    if not rated:
        return _note("No rule was evaluated at this census point.")
    moved = moved or {}
    rows = _rate_rows(rated, moved)
    top = min(1.0, max(0.05, max(float(r["hi"] or 0) for r in rows) * 1.12))
    x_scale = alt.Scale(domain=[0, top], nice=False, zero=True)
    gates = [g for g in GATES if any(r["gate"] == g for r in rows)]
    y = alt.Y("rule:N", title=None, sort=[r.rule_id for r in rated], axis=_rule_axis(moved))
    base = alt.Chart({"values": rows})
    bars = base.mark_bar(height={"band": 0.7}).encode(
        x=alt.X(
            "rate:Q",
            title="failure rate over the sessions at whose own gate the rule is evaluated",
            scale=x_scale,
            axis=alt.Axis(format=".0%", tickCount=6, grid=True),
        ),
        y=y,
        color=alt.Color(
            "gate:N",
            scale=alt.Scale(domain=gates, range=palette(len(gates))),
            legend=alt.Legend(title="rule's gate", orient="bottom", direction="horizontal"),
        ),
        tooltip=["rule:N", "gate:N", "text:N"],
    )
    whiskers = base.mark_rule(color=INK, strokeWidth=1.5).encode(
        x=alt.X("lo:Q", scale=x_scale), x2="hi:Q", y=y
    )
    values = base.mark_text(align="left", dx=4, fontSize=11, color=INK).encode(
        x=alt.X("hi:Q", scale=x_scale), y=y, text="text:N"
    )
    chart = (bars + whiskers + values).properties(width=720, height=22 * len(rows))
    return Chart(svg(_config(chart)), "gate")


def tick_values(order: list[str], width: int = TREND_PANEL[0]) -> list[str]:
    """The census points a trend panel labels: every k-th counted back from the newest (always
    labelled), k the smallest step at which labels `width / len(order)` px apart cannot touch.
    Fewer labels to lay out also keeps vl-convert quick (every label of 30 nights in 19
    panels took four times as long to render)."""
    if not order:
        return []
    longest = max(len(label) for label in order) * CHAR_PX + LABEL_SEPARATION
    step = max(1, math.ceil(longest * len(order) / width))
    return order[::-1][::step][::-1]


def _facet(layer: Any, panels: list[str]) -> Any:
    """Panels of TREND_PANEL size, TREND_COLUMNS a row, each with its own axes and y scale."""
    import altair as alt

    header = alt.Header(labelFontSize=12, labelFontWeight="bold", labelColor=INK)
    return (
        layer.properties(width=TREND_PANEL[0], height=TREND_PANEL[1])
        .facet(
            facet=alt.Facet("rule:N", title=None, sort=panels, header=header),
            columns=TREND_COLUMNS,
            spacing={"row": 14, "column": 18},
        )
        .resolve_scale(y="independent")
        .resolve_axis(x="independent")
    )


def trend_chart(
    trend: Sequence[TrendRate], history: Sequence[Point], moved: dict[str, str] | None = None
) -> Chart:
    """Small multiples: one panel per rule, its rate with the 95% interval shaded at every
    census point; each rule its own colour; the rules that moved since the previous point come
    first, their titles marked ▲ worse or ▼ better."""
    import altair as alt

    moved = moved or {}
    labels = point_labels(history)
    order = [labels[p.name] for p in history]
    rated = [t for t in trend if t.rate is not None and t.point in labels]
    if not rated:
        return _note("No rates yet.")
    titles = {t.rule_id: t.rule_id + MARKS.get(moved.get(t.rule_id, ""), "") for t in rated}
    panels = [titles[r] for r in sorted(titles, key=lambda rule: (rule not in moved, rule))]
    # A night with no rate (no session at the rule's gate) is a null the line and band break
    # at, not left out: left out, the line ran through its place as if it had a rate.
    rows = [
        {"rule": titles[t.rule_id], "point": labels[t.point], "rate": t.rate}
        | {"lo": t.rate_lo, "hi": t.rate_hi}
        for t in trend
        if t.rule_id in titles and t.point in labels
    ]
    x = alt.X(
        "point:O",
        sort=order,
        title=None,
        scale=alt.Scale(domain=order),
        axis=alt.Axis(labelAngle=0, labelLimit=TREND_PANEL[0], values=tick_values(order)),
    )
    color = alt.Color(
        "rule:N", scale=alt.Scale(domain=panels, range=palette(len(panels))), legend=None
    )
    gapped = any(row["rate"] is None for row in rows)
    band = (
        alt.Chart()
        .mark_area(opacity=0.18, invalid="break-paths-filter-domains")
        .encode(x=x, y="lo:Q", y2="hi:Q", color=color)
    )
    line = (
        alt.Chart()
        # A night between two gaps is a path of one point: only its mark shows it.
        .mark_line(
            point=len(order) <= 12 or gapped, strokeWidth=2, invalid="break-paths-filter-domains"
        )
        .encode(
            x=x,
            y=alt.Y(
                "rate:Q",
                title=None,
                scale=alt.Scale(zero=True, nice=True),
                axis=alt.Axis(format=".0%", tickCount=4, labelFlush=True),
            ),
            color=color,
            tooltip=["rule:N", "point:N", alt.Tooltip("rate:Q", format=".1%")],
        )
    )
    chart = _facet(alt.layer(band, line, data={"values": rows}), panels)
    return Chart(svg(_config(chart)), "rule")


def survival_chart(lifetimes: Lifetimes) -> Chart:
    """Share of forks still open against time since the raise (Kaplan–Meier), overall with its
    95% band, and by close kind; days on the axis once the curves run past four days."""
    import altair as alt

    groups = [("all forks", lifetimes.overall)]
    groups += [(f"closed: {k}", v) for k, v in lifetimes.by_close_kind.items()]
    groups = [(name, group) for name, group in groups if group.curve]
    if not groups:
        return _note("No fork has a known lifetime yet.")
    longest = max(p.time for _, group in groups for p in group.curve)
    unit, per = ("days", 24.0) if longest > 96 else ("hours", 1.0)
    rows = [
        {
            "curve": name,
            "time": p.time / per,
            "open": p.survival,
            "lower": p.lower,
            "upper": p.upper,
        }
        for name, group in groups
        for p in group.curve
    ]
    names = [name for name, _ in groups]
    x = alt.X(
        "time:Q",
        title=f"{unit} since the fork was raised",
        scale=alt.Scale(nice=True),
        axis=alt.Axis(format=",~r", tickCount=8, labelFlush=True),
    )
    band = (
        alt.Chart({"values": [r for r in rows if r["curve"] == "all forks"]})
        .mark_area(opacity=0.15, interpolate="step-after", color=INK)
        .encode(x=x, y="lower:Q", y2="upper:Q")
    )
    lines = (
        alt.Chart({"values": rows})
        .mark_line(interpolate="step-after", strokeWidth=2)
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
                scale=alt.Scale(domain=names, range=palette(len(names))),
                legend=alt.Legend(orient="bottom", title=None, direction="horizontal"),
            ),
        )
    )
    return Chart(svg(_config((band + lines).properties(width=720, height=240))), "curve")


def stages_chart(stages: Sequence[StageCount], point: str) -> Chart:
    """Sessions by stage at the census point, each stage its own colour, the count beside."""
    import altair as alt

    counts = {s.stage: s.sessions for s in stages if s.point == point}
    rows = [{"stage": stage, "sessions": counts.get(stage, 0)} for stage in STAGES]
    y = alt.Y("stage:N", title=None, sort=list(STAGES))
    base = alt.Chart({"values": rows})
    bars = base.mark_bar().encode(
        x=alt.X(
            "sessions:Q",
            title="sessions",
            axis=alt.Axis(tickMinStep=1, format=",~r", tickCount=6),
            scale=alt.Scale(nice=True),
        ),
        y=y,
        color=alt.Color(
            "stage:N", scale=alt.Scale(domain=list(STAGES), range=palette(4)), legend=None
        ),
    )
    text = base.mark_text(align="left", dx=4, fontSize=11, color=INK).encode(
        x="sessions:Q", y=y, text=alt.Text("sessions:Q", format=",")
    )
    return Chart(svg(_config((bars + text).properties(width=520, height=120))), "stage")
