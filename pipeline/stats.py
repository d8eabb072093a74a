"""`census stats`: the statistics of spec §7 for one census point, computed by DuckDB.

Every figure comes from a view or a query in queries/ (rule_rates, km_summary, km_curve,
queries/stats/*.sql), streamed over the Parquet files; Python only carries the rows in typed
records and formats them. docs/stats.md describes every field.

Which points
    point     the one selected (default: the latest checked census point): rule rates,
              sync health, compose lag and idle time are for its sessions.
    history   it and every earlier point: stages, stage flows, the trend and fork lifetimes
              (lifetimes need several snapshots). Later points never change these figures.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, TypeVar

from pipeline.engine import connect, fetch_dicts, out_view
from pipeline.resources import one_statement, queries_dir
from pipeline.select import Point, all_points, resolve, unchecked_after
from pipeline.store import Out
from pipeline.vocabulary import GATES, TAIL95, Z95

# Share-open checkpoints: key → hours (km_summary computes S at each).
OPEN_AT_HOURS: dict[str, float] = {"1d": 24.0, "7d": 168.0, "30d": 720.0}
CLOSE_KINDS = ("resolved", "parked")
# Forks the report lists as open the longest (check freezes each point's).
OPEN_FORKS = 20
# Points drawn per survival curve: a step curve of thousands of closes looks the same with
# a few hundred, and the report stays small.
CURVE_POINTS = 400

R = TypeVar("R")


@dataclass(frozen=True)
class RuleRate:
    rule_id: str
    gate: str
    evaluated: int
    failed: int
    info: int
    skipped: int
    rate: float | None
    rate_lo: float | None
    rate_hi: float | None


@dataclass(frozen=True)
class TrendRate(RuleRate):
    point: str = ""
    position: int = 0
    started_at: datetime | None = None


@dataclass(frozen=True)
class CurvePoint:
    time: float
    at_risk: int
    events: int
    censored: int
    survival: float
    lower: float
    upper: float


@dataclass(frozen=True)
class Lifetime:
    """One Kaplan–Meier summary (a group of forks); a quantile never reached is None."""

    forks: int = 0
    estimated: int = 0
    closes: int = 0
    censored: int = 0
    competing: int = 0
    unknown: int = 0
    median: float | None = None
    median_lower: float | None = None
    median_upper: float | None = None
    p25: float | None = None
    p75: float | None = None
    open_at: dict[str, float | None] = field(default_factory=dict)
    curve: tuple[CurvePoint, ...] = ()


def no_forks(unit: str) -> Lifetime:
    """A group with no fork: in hours its open_at keeps the three keys (each None), as every
    other hours group has them, so a reader of --json finds them on an empty census too."""
    return Lifetime(open_at=dict.fromkeys(OPEN_AT_HOURS) if unit == "hours" else {})


@dataclass(frozen=True)
class Lifetimes:
    unit: str  # hours or syncs
    overall: Lifetime
    by_close_kind: dict[str, Lifetime]
    by_raised_by: dict[str, Lifetime]
    by_label: dict[str, Lifetime]

    def groups(self) -> list[tuple[str, Lifetime]]:
        found = [("all forks", self.overall)]
        found += [(f"closed: {k}", v) for k, v in self.by_close_kind.items()]
        found += [(f"raised by: {k}", v) for k, v in self.by_raised_by.items()]
        found += [(f"label {k}", v) for k, v in self.by_label.items()]
        return found


@dataclass(frozen=True)
class StageCount:
    point: str
    position: int
    started_at: datetime
    stage: str
    sessions: int


@dataclass(frozen=True)
class StageFlow:
    from_point: str
    to_point: str
    from_stage: str
    to_stage: str
    sessions: int


@dataclass(frozen=True)
class SyncHealth:
    gate: str
    sessions: int
    syncs: int
    reconciled: int
    failed: int
    in_flight: int
    unpaired: int
    unread: int  # answered by a result line whose outcome could not be read
    orphaned: int
    misfiled: int
    failed_share: float | None
    latency_n: int
    latency_p50_s: float | None
    latency_p90_s: float | None
    latency_max_s: float | None


@dataclass(frozen=True)
class ComposeLag:
    stage: str
    sessions: int
    measured: int
    stale: int
    never_composed: int
    lag_p50_hours: float | None
    lag_p90_hours: float | None
    lag_max_hours: float | None


@dataclass(frozen=True)
class Idle:
    stage: str
    sessions: int
    measured: int
    idle_p50_hours: float | None
    idle_p90_hours: float | None
    idle_max_hours: float | None
    idle_over_7d: int
    idle_over_30d: int


@dataclass(frozen=True)
class Stats:
    out: str
    point: Point
    history: list[Point]
    rule_rates: list[RuleRate]
    fork_lifetimes: Lifetimes
    fork_syncs: Lifetimes
    stages: list[StageCount]
    stage_flows: list[StageFlow]
    sync_health: list[SyncHealth]
    compose_lag: list[ComposeLag]
    idle: list[Idle]
    trend: list[TrendRate]
    # Points crawled after this one and not checked yet (the default shows the latest checked).
    unchecked_later: list[str]

    def as_json(self) -> dict[str, Any]:
        """Stable keys (docs/stats.md); times as ISO 8601 ending in Z."""
        plain: dict[str, Any] = _plain(asdict(self))
        return plain


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def query_sql(name: str) -> str:
    """The text of queries/stats/{name}.sql, as one statement (its final ; dropped)."""
    return one_statement((queries_dir() / "stats" / f"{name}.sql").read_text())


def records(con: Any, cls: type[R], query: str, params: dict[str, Any] | None = None) -> list[R]:
    """A query's rows as `cls` records (columns matched to fields by name)."""
    cursor = con.execute(query, params or {})
    names = [d[0] for d in cursor.description]
    wanted = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return [
        cls(**{k: v for k, v in zip(names, row, strict=True) if k in wanted})
        for row in cursor.fetchall()
    ]


def keep_rule_rates(con: Any, point: Point) -> None:
    """The rule_rates rows of `point` and every earlier point, once: a temp table of the same
    name, which DuckDB reads before the view (the point's rates, the trend and the alarms all
    read it). Frozen counts are read as they are; only a point checked by an older census,
    which has none, is counted from its statuses."""
    _keep_live(con, "rule_counts_live", "points_counted_live", point)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE rule_rates AS "
        f"SELECT * FROM {out_view(con, 'rule_rates')} WHERE position <= $position",
        {"position": point.position},
    )


def keep_session_verdicts(con: Any, point: Point) -> None:
    """Let the sessions view of `point` and earlier points read the verdicts check froze, and
    judge from statuses only a point checked by an older census, which has none."""
    _keep_live(con, "session_verdicts_live", "points_judged_live", point)


def _keep_live(con: Any, view: str, unfrozen: str, point: Point) -> None:
    """Shadow `view` (what check freezes, computed live) with its rows for the points up to
    `point` that have nothing frozen (`unfrozen` lists them), as a temp table. The views read
    the live branch only for those points, but DuckDB computes it for every point before it
    filters (0.8 s at 100,000 sessions with every point frozen); a constant list prunes it."""
    live = con.execute(
        f"SELECT list(point) FROM {unfrozen} WHERE position <= $position",
        {"position": point.position},
    ).fetchall()[0][0]
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {view} AS "
        f"SELECT * FROM {out_view(con, view)} WHERE list_contains($live, point)",
        {"live": live or []},
    )


def rule_rates(con: Any, point: str) -> list[RuleRate]:
    """The one rate of every rule at a census point (the rule_rates view)."""
    return records(
        con,
        RuleRate,
        "SELECT * FROM rule_rates WHERE point = $point ORDER BY gate_rank(gate), rule_id",
        {"point": point},
    )


UNITS = ("hours", "syncs")


def lifetimes(
    con: Any, point: Point, runs: list[str], labels: dict[str, list[str]]
) -> tuple[Lifetimes, Lifetimes]:
    """Fork lifetimes in hours and in reconciled syncs of the point's sessions over the
    history in `runs` (as check froze them, or one pass for a point checked by an older
    census); by_label over each label's own runs (a replay's baseline and candidate never
    mix)."""
    by_label = {pair: _lifetime_groups(con, runs_, runs_) for pair, runs_ in labels.items()}
    both = frozen_lifetime_groups(con, point.name)
    if both is None:
        # The population's pass comes last: the report ranks open forks from its point_forks.
        both = _lifetime_groups(con, runs, list(point.runs))
    for pair, found in by_label.items():
        for unit in UNITS:
            both[unit]["label:" + pair] = found[unit].get("overall", no_forks(unit))
    return _lifetimes("hours", both["hours"]), _lifetimes("syncs", both["syncs"])


# What hours_lifetime keeps of point_forks: no sync counts (DuckDB then never reads a sync
# log for them) and no open-fork keys.
HOURS_ONLY = "hours, CAST(NULL AS DOUBLE) AS syncs, close_kind, raised_by"


def hours_lifetime(con: Any, point: Point, runs: list[str]) -> Lifetime:
    """The summary of every fork's lifetime in hours (the `overall` of `lifetimes`), alone:
    what compare's median needs; frozen, or an hours-only pass at a fraction of the memory."""
    groups = frozen_lifetime_groups(con, point.name)
    if groups is None:
        groups = _lifetime_groups(con, runs, list(point.runs), HOURS_ONLY)
    return groups["hours"].get("overall", no_forks("hours"))


# What a frozen lifetime row depends on besides the history: the lifetime and Kaplan–Meier
# definitions, every view or macro they read (the sync pairs a fork's syncs count, the points
# and their runs), and the settings stats passes them.
ESTIMATOR_FILES = (
    "views/10_points.sql",
    "views/50_sync_pairs.sql",
    "views/60_fork_lifetimes.sql",
    "views/70_kaplan_meier.sql",
    "stats/lifetime_forks.sql",
    "stats/lifetime_series.sql",
    "stats/lifetimes_input.sql",
    "stats/longest_open.sql",
)


def estimator() -> str:
    """A hash of how fork lifetimes are estimated: check copies or carries forward a previous
    point's frozen lifetimes only when they were frozen under the same (a night's figures stay
    the ones it was checked with, but a new night gets the current estimate)."""
    h = hashlib.sha256()
    for name in ESTIMATOR_FILES:
        h.update((queries_dir() / name).read_bytes())
    h.update(repr((Z95, TAIL95, CURVE_POINTS, OPEN_FORKS, OPEN_AT_HOURS)).encode())
    return h.hexdigest()[:16]


def lifetimes_check(con: Any, point: str, under: str | None = None) -> str | None:
    """The check that froze the point's fork lifetimes (the latest, if re-checked); None for a
    point checked by a census that did not freeze them, or, with `under`, that froze them
    under another estimator (a check older than the estimator column froze under none)."""
    found = con.execute(
        "SELECT max(check_id) FROM checks WHERE point = $point AND lifetimes_frozen "
        "AND ($under IS NULL OR estimator IS NOT DISTINCT FROM $under)",
        {"point": point, "under": under},
    ).fetchone()[0]
    return str(found) if found is not None else None


def longest_open(con: Any, point: Point, limit: int = OPEN_FORKS) -> list[dict[str, Any]]:
    """The point's longest-open forks (session_key, root, fork_id, rank, hours), longest
    first: as check froze them, or ranked from the point_forks its own lifetime pass left (a
    point checked by an older census)."""
    columns = "session_key, root, fork_id, rank, hours"
    check_id = lifetimes_check(con, point.name)
    if check_id is None:
        query = f"SELECT {columns} FROM ({query_sql('longest_open')})"
        return fetch_dicts(con, query, {"limit": limit})
    return fetch_dicts(
        con,
        f"SELECT {columns} FROM longest_open "
        "WHERE point = $point AND check_id = $check_id ORDER BY rank LIMIT $limit",
        {"point": point.name, "check_id": check_id, "limit": limit},
    )


def frozen_lifetime_groups(con: Any, point: str) -> dict[str, dict[str, Lifetime]] | None:
    """The point's fork-lifetime summaries and curves as check froze them, per unit and
    group (what `_lifetime_groups` gives for its sessions); None when not frozen."""
    check_id = lifetimes_check(con, point)
    if check_id is None:
        return None
    at = {"point": point, "check_id": check_id}
    where = "WHERE point = $point AND check_id = $check_id"
    summaries = records(
        con,
        _SummaryRow,
        f"SELECT unit || '|' || grp AS grp, * EXCLUDE (grp) FROM lifetime_summaries {where}",
        at,
    )
    curves = con.execute(
        f"SELECT unit || '|' || grp, {', '.join(CURVE_COLUMNS)} FROM lifetime_curves {where} "
        "ORDER BY unit, grp, time",
        at,
    ).fetchall()
    return _groups(summaries, curves)


def _lifetimes(unit: str, groups: dict[str, Lifetime]) -> Lifetimes:
    def part(prefix: str) -> dict[str, Lifetime]:
        return {k.split(":", 1)[1]: v for k, v in sorted(groups.items()) if k.startswith(prefix)}

    kinds = part("close_kind:")
    return Lifetimes(
        unit,
        groups.get("overall", no_forks(unit)),
        {k: kinds.get(k, no_forks(unit)) for k in CLOSE_KINDS},
        part("raised_by:"),
        part("label:"),
    )


def _lifetime_groups(
    con: Any, runs: list[str], population: list[str], columns: str = "*"
) -> dict[str, dict[str, Lifetime]]:
    """Per unit, the Kaplan–Meier summary of every group, from one pass over the history:
    the forks are kept in point_forks (one row each, until the next call), the view
    lifetimes_input expands them into groups, lifetimes_{unit} gives one duration, and both
    units are estimated together as groups named '{unit}|{grp}'."""
    _prepare(con, runs, population, columns)
    return _groups(*_estimates(con))


def _prepare(con: Any, runs: list[str], population: list[str], columns: str = "*") -> None:
    """point_forks for the population over the history in `runs`, and the views over it that
    km_curve and km_summary read (lifetimes_units)."""
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE point_forks AS "
        f"SELECT {columns} FROM ({query_sql('point_forks')})",
        {"runs": runs, "population": population},
    )
    _lifetime_views(con)


def _lifetime_views(con: Any) -> None:
    """The views over point_forks that km_curve and km_summary read (lifetimes_units)."""
    con.execute(f"CREATE OR REPLACE TEMP VIEW lifetimes_input AS {query_sql('lifetimes_input')}")
    for unit in UNITS:
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW lifetimes_{unit} AS "
            f"SELECT grp, {unit} AS duration, event, competing FROM lifetimes_input"
        )
    con.execute(
        "CREATE OR REPLACE TEMP VIEW lifetimes_units AS "
        + " UNION ALL ".join(
            f"SELECT '{unit}|' || grp AS grp, duration, event, competing FROM lifetimes_{unit}"
            for unit in UNITS
        )
    )


# A curve point's columns, in CurvePoint's order (km_curve's, and lifetime_curves').
CURVE_COLUMNS = ("time", "at_risk", "events", "censored", "survival", "lower", "upper")


def _estimates(con: Any) -> tuple[list[_SummaryRow], list[tuple[Any, ...]]]:
    """km_summary and the thinned km_curve over lifetimes_units: the rows both the statistics
    and the frozen tables are made from (a curve row is its grp, then CURVE_COLUMNS)."""
    level = {"z": Z95, "tail": TAIL95}
    # The curve once, for both: it is most of the work.
    con.execute(
        "CREATE OR REPLACE TEMP TABLE lifetimes_curve AS "
        "SELECT * FROM km_curve('lifetimes_units', $z, $tail)",
        level,
    )
    thinned = f"""
        SELECT grp, {", ".join(CURVE_COLUMNS)} FROM (
            SELECT *, row_number() OVER (PARTITION BY grp ORDER BY time) - 1 AS i,
                count(*) OVER (PARTITION BY grp) AS n
            FROM lifetimes_curve
        )
        WHERE n <= {CURVE_POINTS}
            OR i = n - 1
            OR floor(i * {CURVE_POINTS - 1} / (n - 1))
                <> floor((i - 1) * {CURVE_POINTS - 1} / (n - 1))
        ORDER BY grp, time"""
    curves = con.execute(thinned).fetchall()
    # Ordered so a frozen lifetime_summaries file is the same bytes for the same forks.
    summary = "SELECT * FROM km_summary_of('lifetimes_units', 'lifetimes_curve') ORDER BY grp"
    return records(con, _SummaryRow, summary), curves


def _groups(
    summaries: list[_SummaryRow], curves: list[tuple[Any, ...]]
) -> dict[str, dict[str, Lifetime]]:
    by_grp: dict[str, list[CurvePoint]] = {}
    for step in curves:
        by_grp.setdefault(step[0], []).append(CurvePoint(*step[1:]))
    found: dict[str, dict[str, Lifetime]] = {unit: {} for unit in UNITS}
    for row in summaries:
        unit, grp = row.grp.split("|", 1)
        found[unit][grp] = row.lifetime(tuple(by_grp.get(row.grp, ())), unit)
    return found


def lifetime_rows(con: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The summaries and curves of the forks in point_forks (a point's, as check keeps them),
    as the rows check freezes: lifetime_summaries and lifetime_curves, without check_id and
    point."""
    _lifetime_views(con)
    summaries, curves = _estimates(con)
    summary_rows = []
    for row in summaries:
        unit, grp = row.grp.split("|", 1)
        summary = {**asdict(row), "unit": unit, "grp": grp}
        if unit != "hours":
            # Shares still open after 1, 7 and 30 days are of hours alone (§7), as stats shows
            # them: the syncs curve read at 24, 168 and 720 syncs was frozen beside them as
            # the same columns (found by a hunt).
            summary.update(open_1d=None, open_7d=None, open_30d=None)
        summary_rows.append(summary)
    curve_rows = []
    for grp_key, *values in curves:
        unit, grp = grp_key.split("|", 1)
        curve_rows.append(
            {"unit": unit, "grp": grp, **dict(zip(CURVE_COLUMNS, values, strict=True))}
        )
    return summary_rows, curve_rows


@dataclass(frozen=True)
class _SummaryRow:
    grp: str
    forks: int
    estimated: int
    closes: int
    censored: int
    competing: int
    unknown: int
    median: float | None
    median_lower: float | None
    median_upper: float | None
    p25: float | None
    p75: float | None
    open_1d: float | None
    open_7d: float | None
    open_30d: float | None

    def lifetime(self, curve: tuple[CurvePoint, ...], unit: str) -> Lifetime:
        shares = {"1d": self.open_1d, "7d": self.open_7d, "30d": self.open_30d}
        return Lifetime(
            self.forks,
            self.estimated,
            self.closes,
            self.censored,
            self.competing,
            self.unknown,
            self.median,
            self.median_lower,
            self.median_upper,
            self.p25,
            self.p75,
            shares if unit == "hours" else {},
            curve,
        )


def history_runs(history: list[Point]) -> tuple[list[str], dict[str, list[str]]]:
    """The runs of a point's history, and per label pair those of the points carrying it."""
    runs = [r for p in history for r in p.runs]
    labels: dict[str, list[str]] = {}
    for p in history:
        for key, value in p.labels.items():
            labels.setdefault(f"{key}={value}", []).extend(p.runs)
    return runs, dict(sorted(labels.items()))


def compute(
    out_path: str,
    run: str | None = None,
    labels: dict[str, str] | None = None,
    label_keys: Collection[str] | None = None,
    con: Any = None,
) -> Stats:
    """Every statistic of spec §7 for the selected census point (docs/stats.md); fork
    lifetimes by label for the label keys in `label_keys` only, when given (each label costs
    a Kaplan–Meier pass: a per-night tag over 30 nights would cost thirty). `con`: a
    connection to OUT the caller already holds (the report shares one)."""
    out = Out(out_path)
    out.require()
    con = con or connect(out)
    point = resolve(con, run, labels, checked=True)
    history = [p for p in all_points(con) if p.position <= point.position]
    keep_rule_rates(con, point)
    runs, by_label = history_runs(history)
    if label_keys is not None:
        by_label = {k: v for k, v in by_label.items() if k.split("=", 1)[0] in label_keys}
    hours, syncs = lifetimes(con, point, runs, by_label)
    at = {"point": point.name}
    return Stats(
        str(out.root),
        point,
        history,
        rule_rates(con, point.name),
        hours,
        syncs,
        records(con, StageCount, query_sql("stages"), at),
        records(con, StageFlow, query_sql("stage_flows"), at),
        records(con, SyncHealth, query_sql("sync_health"), at),
        records(con, ComposeLag, query_sql("compose_lag"), at),
        records(con, Idle, query_sql("idle"), at),
        records(con, TrendRate, query_sql("trend"), at),
        unchecked_after(con, point, labels),
    )


GATE_ORDER = {g: i for i, g in enumerate(GATES)}
