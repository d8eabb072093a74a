"""`census report`: one self-contained HTML file for a census point (CSS, charts, script inline).

The page answers the morning question first: is anything on fire (the alarms `census check`
raises, decided by the same code), and what changed since the previous census point (rules
whose rate moved beyond its interval, sessions newly failing and newly clean, stage flows,
forks raised and closed). Then the detail: stages, rule rates, the trend, fork lifetimes,
syncs, idle sessions, the worst sessions with their findings, parse issues.

`gather` collects everything the page shows, in one place, from the views and the queries
in queries/report/ (plus stats, compare and alarms, which every command shares); `render`
only formats it with the templates in reports/, which autoescape every value: session text
is shown, never run. Charts are inline SVG (pipeline.charts), so the page loads nothing.
"""

from __future__ import annotations

import hashlib
import shlex
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pipeline import alarms, charts
from pipeline.compare import (
    CLEAN,
    MEDIAN,
    OTHER_MEASURE,
    Comparison,
    Row,
    Selector,
    between,
    compare,
    ordered,
    other_measure,
    point_lifetime,
)
from pipeline.compare_text import median_text, skipped_text
from pipeline.engine import connect, fetch_dicts, out_view
from pipeline.errors import UsageError
from pipeline.output import written
from pipeline.resources import one_statement, queries_dir, reports_dir
from pipeline.rules import load_rules
from pipeline.select import Point, all_points, labels_text, resolve, unchecked_after
from pipeline.stats import Lifetime, Stats, compute, keep_session_verdicts, longest_open
from pipeline.stats_text import censored_text, reach_text
from pipeline.store import Out
from pipeline.textout import (
    count_rate,
    difference_interval,
    interval,
    num,
    pct,
    plural,
    reads_zero,
)
from pipeline.visible import visible
from pipeline.vocabulary import REGRESSION_DEFAULT, STAGES

# Every open fork of the point, as the page's longest-open table lists them (vanished ones are
# censored but not open).
OPEN_FORKS_QUERY = (
    "SELECT * FROM fork_lifetimes_at(selected_point()) WHERE censored AND NOT vanished "
    "ORDER BY hours DESC"
)
WORST_QUERY = (
    "SELECT repo, path, stage, failing_rules FROM sessions "
    "WHERE point = selected_point() AND failing_rules > 0 ORDER BY failing_rules DESC"
)
ISSUE_EXAMPLES = 5
# The most rows SQL's LIMIT takes: `--worst 10**20` (every session) was an internal error.
_MOST_ROWS = 2**63 - 1
# Newly failing sessions shown with their findings (the rest are counted, and one query away).
NEWLY_FAILING = 50
# A label key with more values than this over the history tags nights, not groups: the report
# leaves out its fork lifetimes by label (census stats has them).
GROUPING_VALUES = 6
MOVED = ("regression", "improvement")
# The longest point name a column header shows in full (a date and time reads in 12).
HEADER_CHARS = 24
# Session changes (queries/report/session_changes.sql) in the order the page lists them.
SESSION_CHANGES = ("newly failing", "newly clean")
STAGE_FLOWS = ("opened", "advanced", "harvested", "backward", "gone")


@dataclass
class ReportSummary:
    path: Path
    bytes: int
    seconds: float
    alarm: bool = False  # an alarm asked for (--fail-above, --fail-on-regression) tripped
    alarm_lines: list[str] = field(default_factory=list)  # as census check prints them
    # Why a regression test asked for could not be made (exit 2), as census check says it.
    untested: list[str] = field(default_factory=list)
    point: Point | None = None
    unchecked_later: list[str] = field(default_factory=list)  # points crawled after, not checked
    notes: list[str] = field(default_factory=list)  # how compare's arms were chosen, as it says


@dataclass(frozen=True)
class Tile:
    """A headline figure and how it changed since the previous census point."""

    label: str
    value: str
    delta: str = ""
    tone: str = ""  # "bad", "good" or "" (neutral)


@dataclass
class Since:
    """What changed from the previous census point to this one."""

    previous: Point
    comparison: Comparison
    sessions: dict[str, list[dict[str, Any]]]  # change → sessions, in SESSION_CHANGES order
    flows: dict[str, list[dict[str, Any]]]  # stage flow → sessions, in STAGE_FLOWS order
    forks: dict[str, list[dict[str, Any]]]  # "raised" / "closed" / "vanished" → forks

    @property
    def moved_rules(self) -> list[Row]:
        """Rules whose rate moved beyond its interval, worse first."""
        return [r for r in ordered(self.comparison.rows) if r.verdict in MOVED and _is_rule(r)]

    @property
    def moved_other(self) -> list[Row]:
        """The clean share and the fork-lifetime median, where they moved."""
        return [r for r in ordered(self.comparison.rows) if r.verdict in MOVED and not _is_rule(r)]

    @property
    def directions(self) -> dict[str, str]:
        return {
            r.metric: "worse" if r.verdict == "regression" else "better" for r in self.moved_rules
        }

    def row(self, metric: str) -> Row | None:
        return next((r for r in self.comparison.rows if r.metric == metric), None)


def _is_rule(row: Row) -> bool:
    return row.metric not in (CLEAN, MEDIAN)


@dataclass
class ReportData:
    out_name: str
    point: Point
    previous: Point | None
    stats: Stats
    alarm: alarms.AlarmReport
    since: Since | None
    tiles: list[Tile]
    newly_failing: list[dict[str, Any]]
    worst: list[dict[str, Any]]
    issues: list[dict[str, Any]]
    open_forks: list[dict[str, Any]]
    comparison: Comparison | None = None
    charts: dict[str, charts.Chart] = field(default_factory=dict)
    anchors: set[str] = field(default_factory=set)  # sessions detailed on the page
    twins: set[str] = field(default_factory=set)  # session keys seen under two roots or more
    # Earlier checked points measured by other rules or readers (the trend says so beside them).
    measured_otherwise: list[Point] = field(default_factory=list)
    label_tags: dict[str, int] = field(default_factory=dict)  # label keys left out → values
    roots: list[str] = field(default_factory=list)  # the point's runs' roots, as given
    worst_n: int = 25  # how many of the worst sessions were asked for
    # Which points the previous one was chosen among (" with k=v", when labels selected them).
    previous_scope: str = ""
    # The points between the previous one and this one that saw no session (passed over).
    passed_over: list[str] = field(default_factory=list)
    # The alarms of the points the check that decided this one decided with it, oldest first.
    earlier: list[alarms.AlarmReport] = field(default_factory=list)
    # Points crawled after this one and not checked, when it was shown as the latest checked.
    unchecked_later: list[str] = field(default_factory=list)

    @property
    def alarm_reports(self) -> list[alarms.AlarmReport]:
        """Every point's alarms the page shows, in the order check prints them."""
        return [*self.earlier, self.alarm]

    @property
    def alarm_lines(self) -> list[str]:
        return [line for shown in self.alarm_reports for line in shown.alarm_lines()]


def _query(name: str) -> str:
    return one_statement((queries_dir() / "report" / f"{name}.sql").read_text())


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
    point = resolve(con, selector.run, selector.labels, checked=True)
    before, passed_over = alarms.alarm_baseline(con, point, selector.labels)  # as alarms do
    history = [p for p in all_points(con) if p.position <= point.position]
    grouping, tags = _label_keys(history)
    stats, open_forks, lifetimes = _histories(out, point, before, grouping)
    shown = [point.name] + ([before.name] if before else [])
    charts_ready = charts.warm_up()
    keep_session_verdicts(con, point)
    _keep_points(con, shown, "sessions")
    since = _since(con, stats, before, lifetimes) if before else None
    # After the comparison, which needs the memory.
    _keep_points(con, shown, "findings", FINDINGS_READ)
    watched = alarms.parse_metrics([REGRESSION_DEFAULT] if metrics is None else metrics)
    comparison = since.comparison if since else None
    alarm = alarms.evaluate(
        out_path, point.name, selector.labels, None, threshold, watched, comparison, con=con
    )
    at = {"point": point.name, "previous": before.name if before else ""}
    newly = _detailed(con, "newly_failing", {**at, "limit": NEWLY_FAILING}) if before else []
    data = ReportData(
        str(out_path),
        point,
        before,
        stats,
        alarm,
        since,
        _tiles(con, at, since),
        newly,
        _detailed(con, "worst", {"point": point.name, "limit": min(worst_n, _MOST_ROWS)}),
        _issue_groups(con, point.name),
        open_forks,
    )
    data.anchors = {s["anchor"] for s in data.newly_failing + data.worst}
    data.measured_otherwise = [p for p in history if p.checked and other_measure(p, point)]
    data.twins = {r["session_key"] for r in fetch_dicts(con, _query("twins"), at)}
    data.worst_n, data.label_tags = worst_n, tags
    data.previous_scope, data.passed_over = _scope(selector.labels), passed_over
    data.roots, data.unchecked_later = _roots(con, point), _unchecked_later(con, point, selector)
    # The page's data is in hand: DuckDB's memory is given back before the charts take theirs.
    con.close()
    # A night whose check did not run alarms here as it did in the check that decided it.
    data.earlier = alarms.evaluate_checked_with(out_path, alarm, selector.labels, threshold)
    if baseline is not None and candidate is not None:
        data.comparison = compare(out_path, baseline, candidate)
    charts_ready.join()
    data.charts = _charts(stats, since)
    return data


def _unchecked_later(con: Any, point: Point, selector: Selector) -> list[str]:
    """Points crawled after the point and not checked, when it was chosen as the latest
    (checked): shown as the latest, it would read as tonight's."""
    if selector.run not in (None, "latest"):
        return []
    return unchecked_after(con, point, selector.labels)


def _scope(labels: dict[str, str]) -> str:
    """Which points the previous one was chosen among, as the page says it ("" for all)."""
    return f" with {visible(labels_text(labels))}" if labels else ""


def _roots(con: Any, point: Point) -> list[str]:
    """The roots the point's runs crawled, as given (spec §10: the run, its roots, labels)."""
    query = (
        "SELECT DISTINCT unnest(roots) AS root FROM run_points WHERE point = $point ORDER BY root"
    )
    return [r[0] for r in con.execute(query, {"point": point.name}).fetchall()]


def _histories(
    out: Out, point: Point, before: Point | None, grouping: set[str]
) -> tuple[Stats, list[dict[str, Any]], dict[str, Lifetime]]:
    """What needs the fork histories, first, through a connection of its own: the statistics
    (frozen by check, or one pass for the point), its longest-open forks, and the previous
    point's lifetime summary for the comparison. Closing it gives back what DuckDB kept from
    these queries before the page keeps the two points' sessions."""
    con = connect(out)
    try:
        stats = compute(str(out.root), point.name, label_keys=grouping, con=con)
        top = longest_open(con, point)
        sessions = sorted({f["session_key"] for f in top})
        at = {"point": point.name, "top": top, "sessions": sessions}
        open_forks = fetch_dicts(con, _query("open_forks"), at) if top else []
        lifetimes = {point.name: stats.fork_lifetimes.overall}
        con.execute("DROP TABLE IF EXISTS point_forks")
        if before is not None:
            lifetimes[before.name] = point_lifetime(con, before)
    finally:
        con.close()
    return stats, open_forks, lifetimes


def _label_keys(history: list[Point]) -> tuple[set[str], dict[str, int]]:
    """The label keys whose fork lifetimes the page shows by label (at most GROUPING_VALUES
    values: a grouping such as run=baseline|candidate), and those it leaves out with their
    number of values (a tag per night such as night=2026-11-24)."""
    values: dict[str, set[str]] = {}
    for point in history:
        for key, value in point.labels.items():
            values.setdefault(key, set()).add(value)
    grouping = {k for k, v in values.items() if len(v) <= GROUPING_VALUES}
    return grouping, {k: len(v) for k, v in sorted(values.items()) if k not in grouping}


def _keep_points(con: Any, points: list[str], view: str, columns: str = "*") -> None:
    """The rows of `view` (sessions or findings) for the two points the page shows, computed
    once: a temp table of the same name, which DuckDB reads before the view (queries/report/
    and the comparison of the two points read them many times; each read of a view would join
    every rule result again). Only the page's own connection sees them: a comparison of other
    points (--baseline/--candidate) opens its own. `columns`: those the page's queries read,
    when fewer than the view's."""
    con.execute(
        f"CREATE TEMP TABLE {view} AS SELECT {columns} FROM {out_view(con, view)} "
        "WHERE list_contains($points, point)",
        {"points": points},
    )


# What the page reads of findings (newly_failing.sql and worst.sql): not the session's columns,
# which `sessions` holds; the rows of two points at 100,000 sessions took 141 MB with them.
FINDINGS_READ = "point, session_key, root, rule_id, status, file, line, message, source"


def _since(con: Any, stats: Stats, before: Point, lifetimes: dict[str, Lifetime]) -> Since:
    point = stats.point
    at = {"point": point.name, "previous": before.name}
    changes: dict[str, list[dict[str, Any]]] = {c: [] for c in SESSION_CHANGES + STAGE_FLOWS}
    for row in fetch_dicts(con, _query("session_changes"), at):
        row["anchor"] = anchor(row["session_key"], row["root"])
        changes.setdefault(row["change"], []).append(row)
    # Most failing rules first, as the detailed list further down orders them.
    changes["newly failing"].sort(key=lambda r: -(r["failing_rules"] or 0))
    forks: dict[str, list[dict[str, Any]]] = {"raised": [], "closed": [], "vanished": []}
    for row in fetch_dicts(con, _query("fork_changes"), at):
        forks.setdefault(row["change"], []).append(row)
    return Since(
        before,
        between(con, before, point, lifetimes),
        {c: changes[c] for c in SESSION_CHANGES},
        {c: changes[c] for c in STAGE_FLOWS},
        forks,
    )


def anchor(session_key: str, root: str) -> str:
    """The id of a session's entry in the worst-sessions list: one repository crawled under
    two roots is two sessions, so the root is part of it."""
    digest = hashlib.blake2b(f"{session_key}\0{root}".encode(), digest_size=6).hexdigest()
    return "s-" + digest


def _detailed(con: Any, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Sessions, each with its findings, from a query with one row per finding (one query,
    not one per session)."""
    sessions: dict[tuple[str, str], dict[str, Any]] = {}
    kept = ("session_key", "root", "repo", "path", "stage", "gate")
    for row in fetch_dicts(con, _query(query), params):
        # A session is (session_key, root), as in every view: one repository crawled under two
        # roots is two sessions, each with its own findings.
        key = (row["session_key"], row["root"])
        session = sessions.setdefault(key, {**{k: row[k] for k in kept}, "findings": []})
        session["failing"] = row["failing_rules"]
        session["anchor"] = anchor(row["session_key"], row["root"])
        finding = {k: row[k] for k in ("rule_id", "file", "line", "message")}
        finding["new"] = bool(row.get("new_rule"))
        session["findings"].append(finding)
    return list(sessions.values())


def _issue_groups(con: Any, point: str) -> list[dict[str, Any]]:
    """Parse issues by code, most frequent first, with a few examples each."""
    groups: dict[str, dict[str, Any]] = {}
    params = {"point": point, "examples": ISSUE_EXAMPLES}
    for row in fetch_dicts(con, _query("parse_issues"), params):
        group = groups.setdefault(row["code"], {"code": row["code"], "count": row["issues"]})
        group.setdefault("examples", []).append(row)
    return list(groups.values())


def _delta(
    now: float, before: float | None, digits: int = 0, unit: str = "", worse_up: bool | None = None
) -> tuple[str, str]:
    """A change as text ('+4', '−1.2 pts', 'no change') and its tone: 'bad' when it goes the
    way `worse_up` says is worse, 'good' the other way, '' when neutral or no previous point."""
    if before is None:
        return "", ""
    change = now - before
    text = num(change, digits, signed=True, unit=unit)
    if reads_zero(text):
        return "no change", ""
    tone = "" if worse_up is None else "bad" if (change > 0) == worse_up else "good"
    return text.replace("-", "−", 1), tone


def _tiles(con: Any, at: dict[str, str], since: Since | None) -> list[Tile]:
    """The headline figures, each with its change since the previous point."""
    # summary.sql has no row for a point that saw no session: its figures are zeros, not unknown.
    none = {"sessions": 0, "repos": 0, "clean": 0, "failing": 0}
    found = {r["point"]: r for r in fetch_dicts(con, _query("summary"), at)}
    now = found.get(at["point"], none)
    before = found.get(at["previous"], none) if since else None

    def share(row: dict[str, Any]) -> float | None:
        return row["clean"] / row["sessions"] if row["sessions"] else None

    def prior(key: str) -> float | None:
        return None if before is None else float(before[key])

    clean_now, clean_before = share(now), share(before) if before else None
    tiles = [
        Tile("sessions", f"{now['sessions']:,}", *_delta(now["sessions"], prior("sessions"))),
        Tile(
            "clean at their own gate",
            pct(clean_now),
            *(
                _delta(100 * clean_now, 100 * clean_before, 1, "pts", worse_up=False)
                if clean_now is not None and clean_before is not None
                else ("", "")
            ),
        ),
        Tile(
            "failing a rule",
            f"{now['failing']:,}",
            # Sessions that vanished (an empty or missing root) were not fixed: no fall to show.
            *(
                ("no session seen", "bad")
                if before and before["sessions"] and not now["sessions"]
                else _delta(now["failing"], prior("failing"), worse_up=True)
            ),
        ),
    ]
    if since is None:
        return [*tiles, Tile("repositories", f"{now['repos']:,}")]
    worse = sum(r.verdict == "regression" for r in since.moved_rules)
    better = len(since.moved_rules) - worse
    moved = Tile("rules moved", f"{worse} worse · {better} better", tone="bad" if worse else "")
    if since.comparison.other_measure:
        moved = Tile("rules moved", "not compared", "other rules or readers", tone="bad")
        # Verdicts by other rules or readers: the clean share and failing count are not compared.
        tiles[1:3] = [replace(t, delta="other rules", tone="") for t in tiles[1:3]]
    return [
        *tiles,
        moved,
        Tile(
            "newly failing · newly clean",
            f"{len(since.sessions['newly failing']):,} · {len(since.sessions['newly clean']):,}",
        ),
        Tile(
            "forks raised · closed",
            f"{len(since.forks['raised']):,} · {len(since.forks['closed']):,}",
        ),
    ]


def _charts(stats: Stats, since: Since | None) -> dict[str, charts.Chart]:
    moved = since.directions if since else {}
    return {
        "stages": charts.stages_chart(stats.stages, stats.point.name),
        "rates": charts.rates_chart(stats.rule_rates, moved),
        "trend": charts.trend_chart(stats.trend, stats.history, moved),
        "survival": charts.survival_chart(stats.fork_lifetimes),
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
    # The page's two points are named so that they never read alike (two nights on one day).
    phrases = charts.point_phrases([p for p in (data.point, data.previous) if p is not None])
    env.globals.update(
        pct=pct,
        num=num,
        interval=interval,
        difference_interval=difference_interval,
        count_rate=count_rate,
        plural=plural,
        censored_text=censored_text,
        median_text=median_text,
        skipped_text=skipped_text,
        reach_text=reach_text,
        # A point's name or label may carry a bidi control: shown as an escape, it cannot
        # reorder the sentence that names the point.
        point_label=lambda point: visible(phrases.get(point.name) or charts.point_label(point)),
        visible=visible,
        ordered_rows=ordered,
        shell_word=shlex.quote,
    )
    # A line the CLI prints as it is (`no alarm at …`) begins a sentence on the page.
    env.filters["sentence"] = lambda text: text[:1].upper() + text[1:]
    # A column header stays on one line: a point named by a long label is cut there (in full in
    # its title, and in the headings), lest one header widen its table past the page.
    env.filters["clipped"] = lambda text: (
        text if len(text) <= HEADER_CHARS else text[: HEADER_CHARS - 1] + "…"
    )
    descriptions = {r.rule_id: r.description for r in load_rules()}
    return env.get_template("census.html.j2").render(
        d=data,
        descriptions=descriptions,
        worst_query=WORST_QUERY,
        open_forks_query=OPEN_FORKS_QUERY,
        clean_metric=CLEAN,
        median_metric=MEDIAN,
        moved=MOVED,
        other_measure=OTHER_MEASURE,
        stages=STAGES,
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
    OUT/report.html). The alarms are those of `census check --fail-above threshold
    --fail-on-regression metrics`; with none given, every rule's rate, as check watches."""
    started = time.perf_counter()
    data = gather(
        out_path, selector or Selector(), worst_n, baseline, candidate, threshold, metrics
    )
    page = render(data)
    target = Path(html) if html else Out(out_path).root / "report.html"
    if target.is_dir():
        raise UsageError(
            f"{target} is a directory; give --html a file path, such as {target}/report.html"
        )
    body = page.encode("utf-8")
    with written(target) as handle:
        handle.write(body)
    seconds = time.perf_counter() - started
    # The page watches regressions by default; the exit code reads only the alarms asked for,
    # as check's does (`--fail-above` alone never fails on a regression).
    asked = [
        shown
        if metrics is not None
        else replace(shown, regressions=[], skipped=[], emptied=0, watched=[])
        for shown in data.alarm_reports
    ]
    return ReportSummary(
        target,
        len(body),  # a pipe's size says nothing of what went through it
        seconds,
        any(shown.tripped for shown in asked),
        [line for shown in asked for line in shown.alarm_lines()],
        [line for shown in asked if (line := shown.untested_line())],
        data.point,
        data.unchecked_later,
        data.comparison.notes if data.comparison else [],
    )
