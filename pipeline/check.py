"""`census check`: decide every rule for every census point not yet checked, and freeze it.

A check evaluates each rule on the snapshots that have no result under the current rule set
yet (incremental: a night's new content only), adds the findings along each session's
history that belong to the point (Status backward, forks retitled, ledger entries
rewritten), and commits them with one `checks` row per point. From then on the point's
figures are facts: later crawls add points, never rewrite one (docs/time-model.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pipeline import __version__
from pipeline.engine import connect, out_view, parquet_scan, sibling, table_scan
from pipeline.errors import OutError, UsageError
from pipeline.rules import results_sql, ruleset, series_sql
from pipeline.schema import (
    CHECKS,
    CONTENT_TABLES,
    LIFETIME_CURVES,
    LIFETIME_FORKS,
    LIFETIME_SUMMARIES,
    LONGEST_OPEN,
    RULE_COUNTS,
    RULE_RESULTS,
    SERIES_FINDINGS,
    SESSION_VERDICTS,
    SNAPSHOTS,
)
from pipeline.select import missing_shards
from pipeline.store import (
    Out,
    QueryWriter,
    new_run_id,
    publish,
    started_at,
    written_by,
)

if TYPE_CHECKING:
    from pipeline.select import Point

T = TypeVar("T")

# Snapshots evaluated per batch: bounds memory on a first check of a large OUT.
BATCH_SNAPSHOTS = 5_000
# The columns that tag a frozen lifetime row with its check and point ($check_id, $point).
TAGGED = "SELECT $check_id AS check_id, $point AS point"


@dataclass
class CheckSummary:
    points: list[str]  # the points this check decided, oldest first
    snapshots: int  # snapshots newly evaluated
    series_findings: int
    ruleset: str
    previous_ruleset: str | None  # the last check's rule set, when it differs
    seconds: float
    rechecked: bool = False
    unchanged: list[str] = field(default_factory=list)  # already-checked points left as they are
    # The points no check had decided before this one: a re-check decides the others again,
    # and their alarms were raised by the checks that first decided them.
    first: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # steps after the commit that failed
    # Lines the evaluated snapshots could not read, and how many snapshots have any: each
    # failed the rule that needed it (spec §3.1, fail closed).
    parse_issues: int = 0
    unreadable_snapshots: int = 0
    # Snapshots the decided points observe, evaluated now or before: 0 when they saw no session.
    observed: int = 0


def check(out_path: str, recheck: bool = False) -> CheckSummary:
    """Check every census point of OUT not yet checked (every point with `recheck`)."""
    started = time.perf_counter()
    out = Out(out_path)
    out.require()
    with out.lock():
        out.sweep()
        con = connect(out)
        _pin_points(con)
        current = ruleset()
        points = _points(con)
        pending = [p for p, done in points if recheck or not done]
        unfinished = missing_shards(
            con, [p for p, done in points if not done], [p for p, _ in points]
        )
        if unfinished:
            raise UsageError(unfinished)
        last = con.execute("SELECT arg_max(ruleset, check_id) FROM checks").fetchone()[0]
        summary = CheckSummary(
            pending, 0, 0, current, last if last and last != current else None, 0.0, recheck
        )
        summary.unchanged = [p for p, done in points if done and p not in pending]
        summary.first = [p for p, done in points if not done]
        if pending:
            _decide(out, con, pending, current, summary)
    summary.seconds = time.perf_counter() - started
    return summary


def _pin_points(con: Any) -> None:
    """Read the census points and their runs once, into temp tables of the same names: every
    history macro and view joins them, and each binding of their views is a Parquet scan and
    a window (2.5–6.5 ms, several times per query)."""
    for view in ("run_points", "points"):
        con.execute(f'CREATE OR REPLACE TEMP TABLE "{view}" AS SELECT * FROM {out_view(con, view)}')


def _points(con: Any) -> list[tuple[str, bool]]:
    rows = con.execute("SELECT point, checked FROM points ORDER BY position").fetchall()
    return [(r[0], bool(r[1])) for r in rows]


def _refuse_clock_behind(con: Any, points: list[str], check_id: str) -> None:
    """A point's results are its latest check's, the greatest id, which starts with its start
    time: a re-check on a host whose clock stepped back would sort before the check it
    follows, and that check's results would stand (a --recheck would change nothing)."""
    last, point = con.execute(
        "SELECT max(check_id), arg_max(point, check_id) FROM checks WHERE list_contains($p, point)",
        {"p": points},
    ).fetchone()
    if last is not None and last >= check_id:
        raise OutError(
            f"this host's clock reads {_when(check_id)}, not later than the last check of "
            f"census point {point!r} ({_when(last)}): its results would sort before that "
            "check's, which would stand; set the clock right, then check"
        )


def _when(writer_id: str) -> str:
    """A check's start, from its id, as the messages spell a time."""
    moment = datetime.strptime(writer_id[:15], "%Y%m%dT%H%M%S")
    return f"{moment:%Y-%m-%dT%H:%M:%S}Z"


def _decide(out: Out, con: Any, points: list[str], current: str, summary: CheckSummary) -> None:
    check_id = new_run_id()
    _refuse_clock_behind(con, points, check_id)
    staging = out.root / "staging" / f"check-{check_id}"
    writer = QueryWriter(con, staging, [RULE_RESULTS, SERIES_FINDINGS, CHECKS])
    from pipeline.select import all_points
    from pipeline.stats import lifetimes_check

    history = all_points(con)
    # The points whose lifetimes this check freezes: those no earlier check froze.
    unfrozen = {p for p in points if lifetimes_check(con, p) is None}
    # Lifetimes read nothing the rules decide: they are estimated on a thread of their own,
    # beside the rules, the series and the counts (much of each query is DuckDB planning it,
    # on one core).
    with _beside(con, _freeze_lifetimes, staging, check_id, unfrozen, history) as lifetimes:
        todo = _unevaluated(con, points, current)
        summary.snapshots = len(todo)
        summary.observed = _observed(con, points)
        summary.parse_issues, summary.unreadable_snapshots = con.execute(
            "SELECT count(*), count(DISTINCT snapshot_id) FROM parse_issues "
            "SEMI JOIN (SELECT unnest($ids) AS snapshot_id) USING (snapshot_id)",
            {"ids": todo},
        ).fetchall()[0]
        sources = _fresh_sources(out, {r for p in history if p.name in points for r in p.runs})
        for start in range(0, len(todo), BATCH_SNAPSHOTS):
            evaluated = evaluate(con, todo[start : start + BATCH_SNAPSHOTS], current, sources)
            writer.write(RULE_RESULTS.name, f"SELECT * FROM {evaluated}")
        positions = {p.name: p.position for p in history}
        for point in points:
            found = _write_series(con, writer, point, positions[point], current, check_id)
            summary.series_findings += found
            writer.add_rows(
                CHECKS.name,
                [_check_row(check_id, point, current, len(todo), found, point in unfrozen)],
            )
        writer.close()
        # A point after one checked before may repeat its results: _freeze_results decides.
        before = {later.name: earlier.name for earlier, later in pairwise(history)}
        repeats = {p: before[p] for p in points if p in before and before[p] not in points}
        _freeze_results(con, staging, check_id, points, current, repeats)
        lifetimes.result()
    from pipeline.aftercommit import after_commit

    with out.commit_lock():
        # lifetime_forks is what the next check carries forward: the last point's rows only.
        stale = {LIFETIME_FORKS.name: out.manifest()[LIFETIME_FORKS.name]} if unfrozen else None
        publish(out, staging, f"check-{check_id}", replace=stale)
        # From here the check is in OUT: compaction or census.duckdb failing is a warning.
        summary.warnings = after_commit(out, f"check {check_id}", sweep=True)


def _check_row(
    check_id: str, point: str, current: str, evaluated: int, found: int, frozen: bool
) -> dict[str, Any]:
    """The checks row of a point this check decides."""
    from pipeline.stats import estimator

    return {
        "check_id": check_id,
        "point": point,
        "ruleset": current,
        "checked_at": _now(),
        "tool_version": __version__,
        "snapshots_evaluated": evaluated,
        "series_findings": found,
        "lifetimes_frozen": frozen,
        "estimator": estimator(),
    }


def _write_series(
    con: Any, writer: QueryWriter, point: str, position: int, current: str, check_id: str
) -> int:
    """Stage the point's findings along history; how many there are."""
    rows, params, searched = _series_rows(con, point, position, current)
    with _changed_series_only(con, position, searched) as moved:
        if not moved:
            return 0  # no series has a step at the point: its findings are none
        return writer.write(
            SERIES_FINDINGS.name,
            f"SELECT $check_id AS check_id, * FROM {rows}",
            {**params, "check_id": check_id},
        )


def _series_rows(
    con: Any, point: str, position: int, current: str
) -> tuple[str, dict[str, Any], bool]:
    """The point's findings along history, as rows to select from, their parameters, and
    whether they are searched for: found from its pairs, or copied when its last check used
    these rules (they are facts, and the history a prune dropped since could no longer give
    them again)."""
    same_rules = con.execute(
        "SELECT checked AND ruleset = $ruleset FROM points WHERE point = $point",
        {"point": point, "ruleset": current},
    ).fetchone()
    if same_rules and same_rules[0]:
        return "point_series_findings WHERE point = $point", {"point": point}, False
    return f"({series_sql()})", {"position": position}, True


# The series that may have a step at the census point at $position: those with a commit
# first seen in its runs, and those whose working tree there is not the one tree, on the same
# parents, that the point before saw. Any other series has one pair at the point, between two
# observations of one snapshot, which history_pairs_in leaves out (nothing can have changed).
CHANGED_SERIES = """
WITH seen AS (
    SELECT o.session_key, o.root, p.position,
        count(*) FILTER (WHERE o."commit" IS NOT NULL) AS commits,
        count(*) FILTER (WHERE o."commit" IS NULL) AS trees,
        any_value({snapshot_id: o.snapshot_id, parents: o.parents})
            FILTER (WHERE o."commit" IS NULL) AS tree
    FROM observations o
    JOIN run_points r USING (run_id)
    JOIN points p USING (point)
    WHERE p.position IN ($position - 1, $position)
    GROUP BY ALL
)
SELECT now.session_key, now.root
FROM seen now
LEFT JOIN seen before
    ON before.session_key = now.session_key AND before.root = now.root
    AND before.position = $position - 1
WHERE now.position = $position
    AND (now.commits > 0 OR now.trees <> 1 OR before.trees IS DISTINCT FROM 1
        OR now.tree IS DISTINCT FROM before.tree)
"""


# The content tables the series rules and the history macros read, all by snapshot: while a
# point's series are searched, each holds the rows of the changed series' snapshots only. A
# table left out of this list is read whole, which is slower and as right.
SERIES_CONTENT = ("snapshots", "forks", "ledger", "ledger_resolves", "files")
# Above this many snapshots (a first check, a re-check) the copies would hold most of OUT in
# memory for no gain: the series then read OUT's files.
SERIES_CONTENT_LIMIT = 10_000


@contextmanager
def _changed_series_only(con: Any, position: int, searched: bool) -> Iterator[bool]:
    """While the series findings of the point at `position` are looked for (`searched`), the
    observations of its changed series only (CHANGED_SERIES), and the content of their
    snapshots (SERIES_CONTENT), in temp tables that the history macros and series rules read
    instead of OUT's views: every finding is a series', and a night's check then walks the few
    series that moved, not every series twice, and joins their rows, not every night's.
    Yields whether there may be findings: false when no series moved (a night with nothing
    new), whose pairs are none, so the series query need not be planned at all."""
    if not searched:
        yield True
        return
    shadowed = ["observations", *SERIES_CONTENT]
    try:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE observations AS "
            f"SELECT * FROM {out_view(con, 'observations')} "
            f"SEMI JOIN ({CHANGED_SERIES}) changed USING (session_key, root)",
            {"position": position},
        )
        snapshots = con.execute(
            "SELECT count(DISTINCT snapshot_id) FROM temp.main.observations"
        ).fetchone()[0]
        for name in SERIES_CONTENT if 0 < snapshots <= SERIES_CONTENT_LIMIT else ():
            con.execute(
                f'CREATE OR REPLACE TEMP TABLE "{name}" AS SELECT * FROM {out_view(con, name)} '
                "WHERE snapshot_id IN (SELECT snapshot_id FROM temp.main.observations)"
            )
        yield snapshots > 0
    finally:
        for name in shadowed:
            con.execute(f'DROP TABLE IF EXISTS temp.main."{name}"')


@contextmanager
def _beside(con: Any, work: Callable[..., T], *args: Any) -> Iterator[Future[T]]:
    """`work(other, *args)` on another thread, on a connection of its own (engine.sibling,
    its points pinned): the future of what it returns. Should the caller fail or be
    interrupted meanwhile, the work's query is interrupted rather than waited for."""
    other = sibling(con)

    def run() -> T:
        try:
            _pin_points(other)
            return work(other, *args)
        finally:
            other.close()

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(run)
        try:
            yield future
        except BaseException:
            with suppress(Exception):  # it may have finished, its connection closed
                other.interrupt()
            raise


def _freeze_lifetimes(
    con: Any, staging: Any, check_id: str, unfrozen: set[str], history: list[Point]
) -> None:
    """Each point's fork lifetimes (summaries, curves, longest-open forks, and the forks
    themselves), staged with the check: they depend on the crawled history alone, which later
    crawls never add to, so stats and the report read them instead of walking every fork's
    history again, for the points in `unfrozen` (a point whose lifetimes an earlier check
    froze, a re-check's, keeps them). `history`: every point of OUT, oldest first."""
    from pipeline.stats import estimator, lifetimes_check

    current = estimator()
    tables = [LIFETIME_FORKS, LIFETIME_SUMMARIES, LIFETIME_CURVES, LONGEST_OPEN]
    writer = QueryWriter(con, staging, tables)
    previous: Point | None = None
    for point in history:
        if point.name in unfrozen:
            just_frozen = previous is not None and previous.name in unfrozen
            tag = {"check_id": check_id, "point": point.name}
            if _point_forks(con, point, previous, history, just_frozen) and previous is not None:
                # The previous point's rows: this check's, or those its own check froze.
                source = check_id if just_frozen else lifetimes_check(con, previous.name, current)
                _repeat_lifetimes(writer, tag, previous.name, str(source), just_frozen)
            else:
                _stage_lifetimes(writer, tag)
            writer.write(LIFETIME_FORKS.name, f"{TAGGED}, * FROM frozen_forks", tag)
        previous = point
    for table in ("point_forks", "frozen_forks", "basis_forks", "lifetime_series"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    writer.close()


def _stage_lifetimes(writer: QueryWriter, tag: dict[str, str]) -> None:
    """What point_forks gives: summaries, curves and its longest-open forks (point_forks is
    the point's own, so they are written before the next)."""
    from pipeline.stats import OPEN_FORKS, lifetime_rows, query_sql

    summaries, curves = lifetime_rows(writer.con)
    writer.add_rows(LIFETIME_SUMMARIES.name, [{**tag, **row} for row in summaries])
    writer.add_rows(LIFETIME_CURVES.name, [{**tag, **row} for row in curves])
    query = f"{TAGGED}, * FROM ({query_sql('longest_open')})"
    writer.write(LONGEST_OPEN.name, query, {**tag, "limit": OPEN_FORKS})


def _repeat_lifetimes(
    writer: QueryWriter, tag: dict[str, str], previous: str, source: str, staged: bool
) -> None:
    """The previous point's summaries, curves and longest-open forks as this point's, whose
    forks are the same rows: estimated once, not again (`source`: the check that froze them;
    `staged`: this one, whose rows are not committed yet)."""
    where = "WHERE point = $previous AND check_id = $source"
    for table in (LIFETIME_SUMMARIES, LIFETIME_CURVES, LONGEST_OPEN):
        rows = writer.rows_so_far(table.name) if staged else f'"{table.name}"'
        query = f"{TAGGED}, * EXCLUDE (check_id, point) FROM {rows} {where}"
        writer.write(table.name, query, {**tag, "previous": previous, "source": source})


def _point_forks(
    con: Any, point: Point, previous: Point | None, history: list[Point], just_frozen: bool
) -> bool:
    """frozen_forks (the point's lifetime_forks rows) and point_forks over them, carrying
    forward from the previous point's rows what cannot have changed (lifetime_series.sql, then
    lifetime_forks.sql): the rows this check just computed for it, else those its own check
    froze. True when every series was carried and every series of the previous point is among
    them: the point's forks are then the previous point's, row for row."""
    from pipeline.stats import estimator, lifetimes_check, query_sql

    if just_frozen:
        con.execute("CREATE OR REPLACE TEMP TABLE basis_forks AS SELECT * FROM frozen_forks")
    else:
        # Rows frozen under another estimator are not this census's figures: none carried.
        stored = lifetimes_check(con, previous.name, estimator()) if previous else None
        con.execute(
            "CREATE OR REPLACE TEMP TABLE basis_forks AS SELECT * EXCLUDE (check_id, point) "
            "FROM lifetime_forks WHERE point = $point AND check_id = $check_id",
            {"point": previous.name if previous else None, "check_id": stored},
        )
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE lifetime_series AS {query_sql('lifetime_series')}",
        {"point_runs": list(point.runs)},
    )
    carried, changed, kept = con.execute(
        "SELECT count(*) FILTER (WHERE carried), list(session_key) FILTER (WHERE NOT carried), "
        "(SELECT count(*) FROM basis_forks WHERE fork_id IS NULL) FROM lifetime_series"
    ).fetchone()
    earlier = [r for p in history if p.position < point.position for r in p.runs]
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE frozen_forks AS {query_sql('lifetime_forks')}",
        # None when nothing is carried (a first check): the plain pass over every session.
        {"runs": [*earlier, *point.runs], "changed": (changed or []) if carried else None},
    )
    # point_forks.sql's columns (stats' live passes make them from the history directly).
    con.execute(
        "CREATE OR REPLACE TEMP TABLE point_forks AS "
        "SELECT hours, syncs, close_kind, raised_by, "
        "CASE WHEN still_open THEN session_key END AS open_session_key, "
        "CASE WHEN still_open THEN root END AS open_root, "
        "CASE WHEN still_open THEN fork_id END AS open_fork_id "
        "FROM frozen_forks WHERE fork_id IS NOT NULL"
    )
    return bool(carried) and not changed and carried == kept


# What check freezes of each point it decides: the table, the view that defines it, and the
# view of what an earlier check froze.
FROZEN_RESULTS = (
    (RULE_COUNTS, "rule_counts_live", "rule_counts_frozen"),
    (SESSION_VERDICTS, "session_verdicts_live", "session_verdicts_frozen"),
)

# Whether a point's statuses are the previous point's, row for row: each session is seen as the
# same snapshot at both, neither point has a finding along a history, and the previous point's
# counts and verdicts were frozen for every one of its sessions under the current rule set
# (statuses depend on the snapshot, its rule results and the point's history findings alone).
REPEATS_STATUSES = """
WITH now AS (
    SELECT session_key, root, snapshot_id FROM working_nodes WHERE point = $point
),
before AS (
    SELECT session_key, root, snapshot_id FROM working_nodes WHERE point = $previous
)
SELECT NOT EXISTS (FROM now EXCEPT FROM before)
    AND (SELECT count(*) FROM now) = (SELECT count(*) FROM before)
    AND (SELECT count(*) FROM before)
        = (SELECT count(*) FROM session_verdicts_frozen WHERE point = $previous)
    AND NOT EXISTS (SELECT 1 FROM point_series_findings WHERE point IN ($point, $previous))
    AND (SELECT ruleset FROM points WHERE point = $previous) IS NOT DISTINCT FROM $ruleset
"""


def _freeze_results(
    con: Any,
    staging: Any,
    check_id: str,
    points: list[str],
    current: str,
    repeats: dict[str, str],
) -> None:
    """Count each rule's rate and judge each session for the points just decided, as they will
    read once committed, and stage them with the check: a night's rates and verdicts are then
    read, never computed again (the trend reads every point's rates; the report, two points'
    sessions). The staged results are shown to the views through temp views of the same
    names, which DuckDB reads before OUT's. `repeats`: points after one checked before
    (point → previous): where their statuses are the previous point's (REPEATS_STATUSES),
    its counts and verdicts are theirs, copied rather than counted again."""
    decided = [RULE_RESULTS, SERIES_FINDINGS, CHECKS]
    for table in decided:
        files = sorted((staging / table.name).glob("*.parquet"))
        staged = f" UNION ALL BY NAME SELECT * FROM {parquet_scan(files)}" if files else ""
        con.execute(
            f'CREATE OR REPLACE TEMP VIEW "{table.name}" AS '
            f"SELECT * FROM {out_view(con, table.name)}{staged}"
        )
    # The points as they will read once committed: checked, under this check's rule set.
    _pin_points(con)
    writer = QueryWriter(con, staging, [table for table, _, _ in FROZEN_RESULTS])
    given = {"check_id": "$check_id", "ruleset": "$ruleset"}
    try:
        copied = {
            point: previous
            for point, previous in repeats.items()
            if con.execute(
                REPEATS_STATUSES, {"point": point, "previous": previous, "ruleset": current}
            ).fetchone()[0]
        }
        counted = [p for p in points if p not in copied]
        # Tallied once for both tables: the live views read this temp table of the same name.
        con.execute(
            "CREATE OR REPLACE TEMP TABLE status_tallies AS "
            f"SELECT * FROM {out_view(con, 'status_tallies')} WHERE list_contains($points, point)",
            {"points": counted},
        )
        tag = {"check_id": check_id, "ruleset": current}
        for table, live, frozen in FROZEN_RESULTS:
            columns = ", ".join(f"{given.get(c.name, c.name)} AS {c.name}" for c in table.columns)
            if counted:
                query = f"SELECT {columns} FROM {live} WHERE list_contains($points, point)"
                writer.write(table.name, query, {**tag, "points": counted})
            for point, previous in copied.items():
                rows = f"SELECT $point AS point, f.* EXCLUDE (point) FROM {frozen} f"
                query = f"SELECT {columns} FROM ({rows} WHERE f.point = $previous)"
                writer.write(table.name, query, {**tag, "point": point, "previous": previous})
    finally:
        con.execute("DROP TABLE IF EXISTS temp.main.status_tallies")
        for table in decided:
            con.execute(f'DROP VIEW IF EXISTS temp.main."{table.name}"')
    writer.close()


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _observed(con: Any, points: list[str]) -> int:
    """How many snapshots the points observe (working trees and commits), however evaluated."""
    row = con.execute(
        "SELECT count(DISTINCT o.snapshot_id) FROM observations o JOIN run_points r "
        "USING (run_id) WHERE list_contains($points, r.point)",
        {"points": points},
    ).fetchone()
    return int(row[0]) if row else 0


def _unevaluated(con: Any, points: list[str], current: str) -> list[str]:
    """Snapshots the points observe (working trees and commits) with no result under
    the current rule set."""
    rows = con.execute(
        """
        SELECT DISTINCT o.snapshot_id
        FROM observations o
        JOIN run_points r USING (run_id)
        -- An anti join, not NOT IN, whose NULL semantics cost a mark join (3× slower).
        ANTI JOIN (SELECT snapshot_id FROM rule_results WHERE ruleset = $rs) e USING (snapshot_id)
        WHERE list_contains($points, r.point)
        ORDER BY 1
        """,
        {"points": points, "rs": current},
    ).fetchall()
    return [r[0] for r in rows]


def _fresh_sources(out: Out, runs: set[str]) -> dict[str, list[Path]] | None:
    """Per content table, the files these runs (the pending points') wrote: where a night's
    new snapshots are, so a check need not scan every night's files for them. None when some
    file was written since those runs started by another writer (a compaction may have moved
    their rows), or by one whose time is unknown: then every file is read."""
    first = min((started_at(r) or "" for r in runs), default=None)
    if first is None:
        return None
    manifest = out.manifest()
    sources: dict[str, list[Path]] = {}
    for table in CONTENT_TABLES:
        sources[table.name] = []
        for rel in manifest[table.name]:
            writer = written_by(rel)
            if writer in runs:
                sources[table.name].append(out.tables / rel)
                continue
            written = started_at(writer)
            if written is None or written >= first:
                return None
    return sources


def evaluate(
    con: Any, snapshot_ids: list[str], current: str, sources: dict[str, list[Path]] | None = None
) -> str:
    """Every rule's result for the given snapshots, shaped like rule_results, in a temp table
    whose name it returns (replaced by the next call).

    The snapshots' rows are copied into a schema of their own and the rules run there, so a
    night's check reads only that night's new content (the same way `census detect` runs the
    rules on one folder's rows). `sources`: the files to copy them from (_fresh_sources); when
    some snapshot is not in them, every file is read.
    """
    con.execute(
        "CREATE OR REPLACE TEMP TABLE todo AS SELECT unnest($ids) AS snapshot_id",
        {"ids": snapshot_ids},
    )
    views = con.execute("SELECT current_database()").fetchone()[0]
    con.execute("CREATE SCHEMA IF NOT EXISTS memory.batch")
    if sources is None or not _copy_batch(con, sources):
        _copy_batch(con, None)
    con.execute(f"SET search_path = 'memory.batch,{views}.main'")
    try:
        # A row per gate the rule is evaluated at (spec §6), so `WHERE gate = 'manifest'`
        # reads all the manifest gate decides.
        con.execute(
            "CREATE OR REPLACE TEMP TABLE evaluated AS "
            "SELECT r.snapshot_id, $ruleset AS ruleset, r.rule_id, g.gate, r.gate AS rule_gate, "
            f"r.status, r.file, r.line, r.message FROM ({results_sql()}) r "
            "JOIN gates g ON gate_includes(g.gate, r.gate) "
            "ORDER BY r.snapshot_id, r.rule_id, g.gate_rank, r.line NULLS FIRST, r.message",
            {"ruleset": current},
        )
        return "temp.main.evaluated"
    finally:
        con.execute(f"SET search_path = '{views}.main'")


def _copy_batch(con: Any, sources: dict[str, list[Path]] | None) -> bool:
    """Copy the todo snapshots' rows of every content table into memory.batch, from the given
    files (None: every committed file). False, having stopped, when a snapshot of todo is not
    in the given files' snapshots table (then its rows may be anywhere)."""
    for table in CONTENT_TABLES:
        scan = (
            table_scan(table, sources[table.name])
            if sources is not None
            else f"SELECT * FROM {out_view(con, table.name)}"
        )
        con.execute(
            f'CREATE OR REPLACE TABLE memory.batch."{table.name}" AS '
            f"SELECT * FROM ({scan}) WHERE snapshot_id IN (SELECT snapshot_id FROM todo)"
        )
        if table is SNAPSHOTS and sources is not None:
            found, wanted = con.execute(
                "SELECT (SELECT count(DISTINCT snapshot_id) FROM memory.batch.snapshots), "
                "(SELECT count(*) FROM todo)"
            ).fetchone()
            if found != wanted:
                return False
    return True
