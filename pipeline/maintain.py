"""Keeping OUT small: `census compact` merges each table's files, `census prune` drops whole
census points. Both commit through the manifest like a crawl (pipeline.store): a prune or a
compaction killed part-way leaves OUT reading exactly as before.

A crawl or a check also compacts, under the commit lock, any table that has reached
COMPACT_AT files, so OUT's file count stays bounded however many nights it holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from typing import Any

from pipeline.engine import connect, quote
from pipeline.errors import CensusError, UsageError
from pipeline.schema import TABLES, Table
from pipeline.select import all_points
from pipeline.store import Out, new_run_id, publish, read_state, write_state

# A table with this many committed files is merged into one at the next commit.
COMPACT_AT = 16
# Commit snapshots whose observations a prune removed: a later crawl must not read them again.
PRUNED_COMMITS = "pruned-commits.json"


@dataclass
class MaintenanceSummary:
    files_before: int
    files_after: int
    points_dropped: list[str] = field(default_factory=list)
    rows: dict[str, tuple[int, int]] = field(default_factory=dict)  # table → (before, after)


def _file_count(out: Out) -> int:
    return sum(len(files) for files in out.manifest().values())


def _write_table(con: Any, table: Table, where: str, target: Any, columns: str = "*") -> None:
    """One table's committed rows (those `where` keeps) into one Parquet file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    con.execute(
        f'COPY (SELECT {columns} FROM "{table.name}" WHERE {where}) TO {quote(target)} '
        "(FORMAT parquet, COMPRESSION zstd)"
    )


def rewrite(
    out: Out,
    tables: list[Table],
    where: dict[str, str] | None = None,
    columns: dict[str, str] | None = None,
) -> dict[str, int]:
    """Replace each table's committed files with one file of the rows `where` keeps (all rows
    by default; `columns` as the table's SELECT list changes them), in one commit; returns the
    rows each table now holds. Call under a lock that keeps other writers out of these tables
    (the exclusive lock, or the commit lock)."""
    writer_id = f"compact-{new_run_id()}"
    staging = out.root / "staging" / writer_id
    con = connect(out)
    manifest = out.manifest()
    rows: dict[str, int] = {}
    for table in tables:
        target = staging / table.name / "part-0.parquet"
        kept = (where or {}).get(table.name, "true")
        _write_table(con, table, kept, target, (columns or {}).get(table.name, "*"))
        rows[table.name] = int(
            con.execute(f"SELECT count(*) FROM read_parquet({quote(target)})").fetchone()[0]
        )
    publish(out, staging, writer_id, replace={t.name: manifest[t.name] for t in tables})
    return rows


def auto_compact(out: Out) -> list[str]:
    """Merge the tables that reached COMPACT_AT files (call under the commit lock)."""
    manifest = out.manifest()
    crowded = [t for t in TABLES.values() if len(manifest[t.name]) >= COMPACT_AT]
    if crowded:
        rewrite(out, crowded)
    return [t.name for t in crowded]


def compact(out_path: str) -> MaintenanceSummary:
    """Merge every table's files into one; OUT reads the same rows after."""
    out = Out(out_path)
    out.require()
    with out.lock():
        out.sweep()
        before = _file_count(out)
        tables = [t for t in TABLES.values() if len(out.manifest()[t.name]) > 1]
        if tables:
            rewrite(out, tables)
        _sweep_after_readers(out)
        return MaintenanceSummary(before, _file_count(out))


def _sweep_after_readers(out: Out) -> None:
    """Delete the files a rewrite superseded only once census.duckdb names the new ones: a
    reader of it (the DuckDB CLI) sees the old files or the new, never a file gone (it got IO
    errors for the second between the sweep and the next command's rebuild). When it cannot
    be rebuilt, the old files stay until a later sweep."""
    import duckdb

    from pipeline.aftercommit import refresh_database

    try:
        refresh_database(out)
    except (CensusError, OSError, duckdb.Error):  # a full disk is DuckDB's IOException too
        return
    out.sweep()


def prune(
    out_path: str,
    keep_last: int | None = None,
    before: datetime | None = None,
    point: str | None = None,
) -> MaintenanceSummary:
    """Drop whole census points (all but the last `keep_last`, those started before `before`,
    or the one named `point`), keeping every snapshot a kept point observes; OUT then reads as
    a crawl of the kept runs would have left it, and the kept points' checked results are
    unchanged."""
    out = Out(out_path)
    out.require()
    with out.lock():
        out.sweep()
        con = connect(out)
        points = all_points(con)
        dropped = _dropped(points, keep_last, before, point)
        _refuse_losing_history(points, dropped)
        summary = MaintenanceSummary(_file_count(out), 0, [p.name for p in dropped])
        if dropped:
            # A checked point's commits were judged there: a later crawl must not read them
            # as new. A point never checked (a partial night) judged none: they move to the
            # next night that crawled their root, else they are read again.
            _remember_pruned_commits(out, con, [r for p in dropped if p.checked for r in p.runs])
            moves = _moved_commits(con, points, dropped)
            _reread_commits(out, con, [r for p in dropped if not p.checked for r in p.runs], moves)
            kept_runs = [r for p in points if p not in dropped for r in p.runs]
            kept_points = [p.name for p in points if p not in dropped]
            counts = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in TABLES}
            keep = _keep(kept_runs, kept_points, moves)
            after = rewrite(out, list(TABLES.values()), keep, _moving(moves))
            summary.rows = {t: (counts[t], after[t]) for t in after}
            con.close()
            _sweep_after_readers(out)
        summary.files_after = _file_count(out)
        return summary


def _dropped(
    points: list[Any], keep_last: int | None, before: datetime | None, point: str | None
) -> list[Any]:
    if sum(way is not None for way in (keep_last, before, point)) != 1:
        raise UsageError("give --keep-last N, --before DATE or --point NAME (one of them)")
    if point is not None:
        named = [p for p in points if p.name == point]
        if not named:
            raise UsageError(f"OUT holds no census point {point!r}")
        if len(points) == 1:
            raise UsageError(f"{point!r} is OUT's only census point; a prune keeps at least one")
        return named
    if keep_last is not None:
        if keep_last < 1:
            raise UsageError("--keep-last must keep at least one census point")
        return points[:-keep_last]
    assert before is not None
    dropped = [p for p in points if p.started_at < before]
    if len(dropped) == len(points):
        raise UsageError(
            f"every census point started before {_instant_text(before)}; a prune keeps at least one"
        )
    return dropped


def _instant_text(when: datetime) -> str:
    """--before as the prune read it, in UTC: the date alone when it is midnight."""
    utc = when.astimezone(UTC) if when.tzinfo is not None else when
    if utc.time() == time(0):
        return f"{utc:%Y-%m-%d}"
    return f"{utc:%Y-%m-%d %H:%M:%S}Z"


def _refuse_losing_history(points: list[Any], dropped: list[Any]) -> None:
    """A point not checked yet finds what changed since the checked points before it: a prune
    that drops one of those first would lose its findings along the history (an unchecked
    point itself may be dropped: a night whose shards can no longer all be crawled)."""
    for later in points:
        if later.checked or later in dropped:
            continue
        earlier = [p.name for p in dropped if p.checked and p.position < later.position]
        if earlier:
            raise UsageError(
                f"census point {later.name!r} is not checked yet and compares with "
                f"{earlier[-1]!r}, which this prune drops; run census check first"
            )


def _moved_commits(con: Any, points: list[Any], dropped: list[Any]) -> list[tuple[str, str, str]]:
    """(dropped run, root, kept run) for each unchecked dropped point's commits: the first run
    of the next kept point, not checked yet, that crawled the root. Its crawl saw them but did
    not store them (OUT held them), so they are first seen there: dropped, the point's step
    back was found a night late, by the crawl after it, and that point was decided clean."""
    moves: list[tuple[str, str, str]] = []
    for gone in (p for p in dropped if not p.checked):
        later = next((p for p in points if p.position > gone.position and p not in dropped), None)
        if later is None or later.checked:
            continue
        moves += con.execute(
            "SELECT DISTINCT o.run_id, o.root, (SELECT r.run_id FROM runs r "
            "WHERE list_contains($later, r.run_id) AND list_contains(r.roots, o.root) "
            "ORDER BY r.started_at, r.run_id LIMIT 1) AS target "
            'FROM observations o WHERE o."commit" IS NOT NULL AND list_contains($runs, o.run_id) '
            "AND target IS NOT NULL",
            {"later": list(later.runs), "runs": list(gone.runs)},
        ).fetchall()
    return moves


def _moving(moves: list[tuple[str, str, str]]) -> dict[str, str]:
    """The observations' columns, a moved commit's run replaced by the run it moves to."""
    return {"observations": f"* REPLACE ({_moved_run(moves)} AS run_id)"}


def _moved_run(moves: list[tuple[str, str, str]]) -> str:
    """An observation's run after the prune: the one its commit moves to, else its own."""
    cases = " ".join(
        f"WHEN run_id = {quote(a)} AND root = {quote(root)} THEN {quote(b)}" for a, root, b in moves
    )
    return f'CASE WHEN "commit" IS NULL THEN run_id {cases} ELSE run_id END' if moves else "run_id"


def _keep(
    runs: list[str], points: list[str], moves: list[tuple[str, str, str]] | None = None
) -> dict[str, str]:
    """Per table, the rows a prune keeps: the kept runs' and points', and the snapshots they
    observe (a moved commit's among them)."""
    run_list = "[" + ", ".join(quote(r) for r in runs) + "]"
    point_list = "[" + ", ".join(quote(p) for p in points) + "]"
    moved_run = _moved_run(moves or [])
    observed = (
        f"snapshot_id IN (SELECT snapshot_id FROM observations "
        f"WHERE list_contains({run_list}, {moved_run}))"
    )
    kept: dict[str, str] = {}
    for table in TABLES.values():
        if table.name == "runs":
            kept[table.name] = f"list_contains({run_list}, run_id)"
        elif table.name == "observations":
            kept[table.name] = f"list_contains({run_list}, {moved_run})"
        elif table.name == "lifetime_forks":
            # Computed over the dropped runs too: the next check must not carry them forward.
            kept[table.name] = "false"
        elif "point" in table.names:  # what check decided or froze for a point
            kept[table.name] = f"list_contains({point_list}, point)"
        elif table.name == "parse_issues":
            kept[table.name] = f"({observed}) OR list_contains({run_list}, run_id)"
        else:
            kept[table.name] = observed
    return kept


def _remember_pruned_commits(out: Out, con: Any, runs: list[str]) -> None:
    """The dropped runs' commit snapshots, so that a later crawl does not read them as new."""
    rows = con.execute(
        'SELECT DISTINCT root || chr(31) || session_key || chr(31) || "commit" '
        'FROM observations WHERE "commit" IS NOT NULL AND list_contains($runs, run_id)',
        {"runs": runs},
    ).fetchall()
    known = set(read_state(out, PRUNED_COMMITS).get("keys", []))
    write_state(out, PRUNED_COMMITS, {"keys": sorted(known | {r[0] for r in rows})})


def _reread_commits(out: Out, con: Any, runs: list[str], moves: list[tuple[str, str, str]]) -> None:
    """The repositories of the dropped runs' commit snapshots that no later run takes are read
    again in full by the next --git-history crawl, which stores those commits (and fails their
    steps) anew."""
    from pipeline.crawl import forget_history

    rows = con.execute(
        'SELECT DISTINCT root, repo_path FROM observations WHERE "commit" IS NOT NULL '
        "AND list_contains($runs, run_id) "
        "AND NOT list_contains($moved, run_id || chr(31) || root)",
        {"runs": runs, "moved": [f"{a}\x1f{root}" for a, root, _ in moves]},
    ).fetchall()
    if rows:
        forget_history(out, {(r[0], r[1]) for r in rows})
