"""`census sql`: ad hoc SQL over OUT's views, sandboxed.

The query runs on a connection where DuckDB may touch no file (pipeline.engine.connect with
sandbox): it reads OUT's committed tables and nothing else, and the only file it can cause
to be written is the one named by --output, which Python writes from the result (Parquet
passes through a temporary file of census's own outside OUT, removed at once).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from pipeline.engine import connect, in_memory, quote
from pipeline.errors import (
    SWEPT,
    CensusError,
    OutError,
    UsageError,
    damaged_out,
    damaged_table,
    swept_file,
    system_failure,
)
from pipeline.output import written
from pipeline.select import resolve
from pipeline.store import Out

# No limit, for DuckDB's table renderer (rows, total width, one column's width).
ALL = 2**62
# DuckDB's table renderer reads at most 10,000 rows of a result (and then prints '? rows'): a
# longer result goes to a file or a pipe as consecutive tables of this many rows, each whole.
PAGE_ROWS = 5_000


def run_query(
    out_path: str,
    query: str,
    fmt: str,
    output: Path | None,
    run: str | None = None,
    labels: dict[str, str] | None = None,
    con: Any = None,
) -> str | None:
    """The query's result in `fmt` (table, csv, json, parquet); written to `output` when given
    (None is returned then), else returned as text. `con`: a sandboxed connection to OUT opened
    earlier (by default one is opened here)."""
    import duckdb

    out = Out(out_path)
    out.require()
    if output is not None and output.resolve().is_relative_to(out.root):
        # Read-only means OUT too: an --output over a committed file damaged OUT silently.
        raise UsageError(
            f"--output {output} lies inside OUT ({out.root}), which census sql only reads; "
            "write the result elsewhere"
        )
    if fmt == "parquet" and output is None and sys.stdout.isatty():
        raise UsageError(
            "--format parquet is binary: give --output FILE, or send stdout to a file or pipe"
        )
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as err:
        raise UsageError(_one_line(err)) from None
    if not statements:
        # Blank, or comments only: a script's empty query is a mistake, not an empty answer.
        raise UsageError('the query is empty; give one: census sql "SELECT …"')
    _one_result(statements)
    con = con or connect(out, sandbox=True)
    try:
        return answer(out, con, query, fmt, output, run, labels)
    except duckdb.Error as err:
        if not swept_file(err, str(out.root)):
            raise _failure(err, out) from None
    # A compaction or prune committed while the query ran and swept the files it was reading
    # (exit 2, "check the disk"): the rows are in OUT's new files, so the query is asked again.
    con = connect(out, sandbox=True)
    try:
        return answer(out, con, query, fmt, output, run, labels)
    except duckdb.Error as err:
        raise _failure(err, out) from None


def answer(
    out: Out,
    con: Any,
    query: str,
    fmt: str,
    output: Path | None,
    run: str | None = None,
    labels: dict[str, str] | None = None,
) -> str | None:
    """The query's result over `con`, a sandboxed connection to OUT (pipeline.engine.connect)."""
    _select_point(con, run, labels or {})
    relation = con.sql(query)
    if relation is None:
        return None
    return _emit(con, relation, fmt, output)


def _one_result(statements: list[Any]) -> None:
    """Refuse a query before the last that returns rows: DuckDB hands back the last statement's
    result alone, so `SELECT …; SELECT …` showed the second and dropped the first without a
    word. Statements that set up (SET, CREATE TEMP MACRO) may come first."""
    import duckdb

    rows = (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN, duckdb.StatementType.CALL)
    for i, statement in enumerate(statements[:-1], start=1):
        if statement.type in rows:
            first = " ".join(statement.query.split())[:60]
            raise UsageError(
                f"census sql shows one result, the last statement's: statement {i} of "
                f"{len(statements)} ({first}) returns rows that would not be shown; run each "
                "query on its own"
            )


def _failure(err: Exception, out: Out) -> CensusError:
    """A query's error in one line: OUT's own files failing (damaged, or the machine
    refusing to open them) are said as every command says them, not as the query's fault."""
    if swept_file(err, str(out.root)):
        return OutError(SWEPT)  # swept again during the second reading
    found = system_failure(err, str(out.root))
    if found is not None:
        return found
    if _refused(err):
        # The sandbox refusing a path the query named, OUT's own files included: no damage.
        return UsageError(_one_line(err))
    damaged = damaged_table(err, str(out.root))
    if damaged is not None:
        return OutError(damaged_out(damaged))
    return UsageError(_one_line(err))


def _one_line(err: Exception) -> str:
    first = str(err).splitlines()[0]
    if _refused(err):
        # An extension DuckDB would install for the query says why on its second line.
        said = " ".join(line.strip() for line in str(err).splitlines())
        return f"{said} — census sql reads only OUT's tables and writes only --output FILE"
    return f"{first} (docs/tables.md lists every view and column)"


def _refused(err: Exception) -> bool:
    """Whether DuckDB refused what the sandbox forbids (a file by path, a setting, the
    extension a function needs: DuckDB's bare Error, which said "OUT is damaged" of a
    healthy OUT, found by a hunt)."""
    refused = ("disabled by configuration", "disabled through configuration", "has been locked")
    # Its first two lines: a parser error quotes the query further down, words and all.
    said = "\n".join(str(err).splitlines()[:2])
    return any(words in said for words in refused)


def _select_point(con: Any, run: str | None, labels: dict[str, str]) -> None:
    """selected_point(): the census point --run/--label name (the latest checked by default)."""
    try:
        name = resolve(con, run, labels, checked=True, unchecked_ok=True).name
    except CensusError:
        if run or labels:
            raise
        name = None  # an OUT with no point yet still answers queries that do not ask for one
    value = "NULL" if name is None else quote(name)
    con.execute(f"CREATE OR REPLACE TEMP MACRO selected_point() AS {value}")


def _emit(con: Any, relation: Any, fmt: str, output: Path | None) -> str | None:
    if fmt == "parquet":
        # Parquet readers (DuckDB, pandas, pyarrow) take names without case: Id and id clash.
        _one_name_each(relation.columns, fmt, str.casefold)
        if output is None:
            # Stdout is a file or a pipe (sql refuses a terminal): the Parquet bytes go there.
            _parquet(relation, sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return None
        with written(output) as handle:
            _parquet(relation, handle)
        return None
    if fmt == "table":
        text = _table(con, relation, whole=output is not None or not sys.stdout.isatty())
    elif fmt == "csv":
        text = _csv(relation)
    else:
        cols = relation.columns
        # A JSON object holds a name once: the second column would replace the first.
        _one_name_each(cols, fmt, str)
        rows = [
            {c: _json_value(v) for c, v in zip(cols, row, strict=True)}
            for row in _spelled(relation, [_python_spells(t) for t in relation.types]).fetchall()
        ]
        text = json.dumps(rows, default=str, indent=2) + "\n"
    if output is None:
        return text
    with written(output) as handle:
        handle.write(text.encode())
    return None


def _one_name_each(columns: list[str], fmt: str, key: Any) -> None:
    """Refuse a result whose format cannot hold two columns named alike (`key` says alike)."""
    seen: dict[str, str] = {}
    for name in columns:
        if key(name) in seen:
            raise UsageError(
                f"--format {fmt}: the result has more than one column named {name!r}; "
                "give each its own name (SELECT s.topic AS s_topic, p.topic AS p_topic …)"
            )
        seen[key(name)] = name


def _parquet(relation: Any, handle: Any) -> None:
    """The rows as Parquet by DuckDB's own writer, which stores every DuckDB type (pyarrow's
    stopped at an INTERVAL, a difference of two timestamps, and at an empty MAP). It runs on
    a connection of its own holding only the result, since the query's may touch no file."""
    import shutil
    import tempfile

    rows = relation.to_arrow_table()
    with tempfile.TemporaryDirectory(prefix="census-sql-") as folder:
        path = Path(folder) / "result.parquet"
        writer = in_memory()
        try:
            writer.register("result", rows)
            writer.execute(f"COPY result TO {quote(path)} (FORMAT parquet)")
        finally:
            writer.close()
        with path.open("rb") as written_rows:
            shutil.copyfileobj(written_rows, handle)


def _table(con: Any, relation: Any, whole: bool) -> str:
    """DuckDB's box table: on a terminal its preview (the first and last rows, long values cut,
    the count below), in a file or a pipe every row and value, which a script reads whole (the
    preview kept 20 of 520 rows there, and one table drawn whole stopped at 10,000 rows)."""
    if not whole:
        return str(relation)
    # Held once, so that every page is one reading of the query, in its order (a second
    # reading of an ORDER BY with ties may order them otherwise). Held under names of its
    # own: a table cannot have two columns named alike (a join's two snapshot_id, or Id and
    # id), which DuckDB would rename, and each page shows the query's names again.
    held = ", ".join(f"#{i + 1} AS c{i}" for i in range(len(relation.columns)))
    relation.project(held).create("_census_rows")  # in the sandbox's memory, not in OUT
    shown = [name.replace('"', '""') for name in relation.columns]
    rows = con.table("_census_rows").project(
        ", ".join(f'c{i} AS "{name}"' for i, name in enumerate(shown))
    )
    count = con.execute("SELECT count(*) FROM _census_rows").fetchall()[0][0]
    pages = range(0, max(count, 1), PAGE_ROWS)
    return "\n".join(_drawn(rows.limit(PAGE_ROWS, start)) for start in pages)


def _drawn(relation: Any) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        relation.show(max_rows=ALL, max_width=ALL, max_col_width=ALL)
    return buffer.getvalue().removesuffix("\n")


def _csv(relation: Any) -> str:
    """The rows as CSV, each value as DuckDB spells it for a list, map or struct (`[1, 2]`,
    `{team=platform}`): whole, on one line, and readable back by DuckDB."""
    import csv

    columns = relation.columns
    # "[" for a list (INTEGER[]) and a fixed-size array (INTEGER[2]) alike: Python's tuple
    # repr of an array, `(datetime.datetime(…), None)`, is no value a reader understands.
    marks = ("[", "MAP(", "STRUCT(", "UNION(")
    cast = [any(m in str(t) for m in marks) or _python_spells(t) for t in relation.types]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(_spelled(relation, cast).fetchall())
    return buffer.getvalue()


def _python_spells(column_type: Any) -> bool:
    """A type Python would spell in a way no reader takes back: an INTERVAL as a timedelta
    (`-1 day, 23:55:00` for five minutes early, `30 days, 0:00:00` for a month), a BLOB as
    `b'…'`. DuckDB's own spelling (`-00:05:00`, `1 month`) is used instead."""
    return str(column_type) in ("INTERVAL", "BLOB")


def _spelled(relation: Any, cast: list[bool]) -> Any:
    """The relation with the columns marked in `cast` as DuckDB spells them (VARCHAR)."""
    if not any(cast):
        return relation
    # By position, not by name: a second column named alike (a join's two `line`, or Id and
    # id) read by name showed the first one's values.
    projection = [
        f"CAST(#{i + 1} AS VARCHAR) AS c{i}" if each else f"#{i + 1} AS c{i}"
        for i, each in enumerate(cast)
    ]
    return relation.project(", ".join(projection))


def _json_value(value: Any) -> Any:
    """NaN and infinities as null: JSON has no such numbers (json.dumps would write `NaN`,
    which strict parsers refuse). A DECIMAL (`SELECT 2.5`, a sum of them) is a number, not
    the string json.dumps' default would make of it."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value
