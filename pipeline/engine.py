"""DuckDB over OUT: a view per table (its committed files), the derived views of
queries/views/, and the vocabulary macros.

Commands open an in-memory DuckDB with these views (so nothing locks census.duckdb), reading
the files by absolute path. Each commit also writes OUT/census.duckdb for users, with the
same views (so `duckdb OUT/census.duckdb` works from any directory, spec §6), in a storage
version that DuckDB 1.1 and later read; a copied or moved OUT gets views over its own files
from the next census command on it, and a census.duckdb altered since census wrote it (the
DuckDB CLI opens it read-write) is read by no command and made whole by the next.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.resources import queries_dir
from pipeline.schema import TABLES, Table, duckdb_ddl, duckdb_type
from pipeline.store import DATABASE_STATE, Out, read_state
from pipeline.vocabulary import sql_macros

if TYPE_CHECKING:
    import duckdb

# census.duckdb is written readable by DuckDB 1.1 and later (the CLI pip installs may be older).
STORAGE_VERSION = "v1.1.0"


def quote(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def parquet_scan(paths: Iterable[Path | str]) -> str:
    """A scan of these Parquet files, columns matched by name: files an older census wrote
    may lack a column, which reads as NULL."""
    listed = ", ".join(quote(p) for p in paths)
    return f"read_parquet([{listed}], union_by_name = true)"


def empty_select(table: Table) -> str:
    """A SELECT of no rows with the table's columns in their declared types."""
    cols = ", ".join(f'CAST(NULL AS {duckdb_type(c.type)}) AS "{c.name}"' for c in table.columns)
    return f"SELECT {cols} WHERE false"


def _columns(table: Table) -> str:
    return ", ".join(f'"{c.name}"' for c in table.columns)


def table_views(out: Out) -> list[str]:
    """CREATE VIEW statements for every table over its committed files.

    The typed empty select comes first so that every view has every column of the schema,
    also over files an older census wrote without some of them.
    """
    statements = []
    manifest = out.manifest()
    for table in TABLES.values():
        paths = [out.tables / rel for rel in manifest[table.name]]
        statements.append(f'CREATE OR REPLACE VIEW "{table.name}" AS {table_scan(table, paths)}')
    return statements


def table_scan(table: Table, paths: Sequence[Path | str]) -> str:
    """A SELECT of the table's rows in these files, every column of the schema in its declared
    type (none at all: no rows)."""
    body = empty_select(table)
    if not paths:
        return body
    return (
        f"SELECT {_columns(table)} FROM ({body} UNION ALL BY NAME "
        f"SELECT * FROM {parquet_scan(paths)})"
    )


def derived_views() -> list[str]:
    """The vocabulary macros and the rule list, then the views users query by name
    (queries/views/*.sql)."""
    from pipeline.rules import rules_view

    folder = queries_dir() / "views"
    return [*sql_macros(), rules_view(), *(p.read_text() for p in sorted(folder.glob("*.sql")))]


def out_view(con: Any, name: str) -> str:
    """OUT's own view `name`, qualified by database: the commands shadow some views with temp
    tables of the same name, and in an in-memory DuckDB `main.name` finds the temp one first."""
    database = con.execute("SELECT current_database()").fetchone()[0]
    return f'"{database}".main."{name}"'


def fetch_dicts(con: Any, query: str, params: Any = None) -> list[dict[str, Any]]:
    """A query's rows as dicts keyed by column name (params: a list, or a dict for $names)."""
    cursor = con.execute(query, params if params is not None else [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def connect(out: Out | None = None, sandbox: bool = False, views: bool = True) -> Any:
    """An in-memory DuckDB with OUT's views (or empty tables when out is None, for detect).

    OUT's census.duckdb is attached read-only when it matches the committed manifest (binding
    every view again costs more than the rest of a small command); otherwise the views are
    created here. With `sandbox`, the tables are Arrow datasets that pyarrow reads from OUT's
    committed files, and DuckDB itself may touch no file at all (external access off,
    configuration locked): an ad hoc query can neither read nor write anything on the machine.
    """
    con = in_memory(threads=str(os.cpu_count() or 1))
    _session_settings(con)
    if out is not None and not sandbox and _attach(con, out):
        return con
    if out is None:
        for table in TABLES.values():
            con.execute(duckdb_ddl(table))
        if not views:
            # The rules read tables and the vocabulary's macros only (census detect).
            for statement in sql_macros():
                con.execute(statement)
            return con
    elif sandbox:
        _register_datasets(con, out)
    else:
        for statement in table_views(out):
            con.execute(statement)
    for statement in derived_views():
        con.execute(statement)
    if sandbox:
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    return con


# Each in-memory database of this process spills to a folder of its own.
_SPILLS = itertools.count()


def in_memory(**config: str) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose spill folder, should a query outgrow memory, is under the
    system's temp folder: DuckDB's own default is `./.tmp`, in the current folder, which may be
    a crawled repository (`census crawl .`), and the census never writes inside what it reads.
    DuckDB makes the folder only when it spills, and removes it when the database closes."""
    import tempfile

    import duckdb

    spill = Path(tempfile.gettempdir()) / f"census-{os.getpid()}-{next(_SPILLS)}.spill"
    return duckdb.connect(":memory:", config={"temp_directory": str(spill), **config})


def _session_settings(con: Any) -> None:
    """What every connection of a command sets for itself (DuckDB keeps them per connection)."""
    # No progress bar: DuckDB draws it on stdout for a long query, inside the command's output.
    con.execute("SET enable_progress_bar = false")
    # Times are UTC everywhere (spec §3): a message's `…Z` and a point's date must not follow
    # the machine's zone, which DuckDB would use to format and return TIMESTAMPTZ values.
    con.execute("SET TimeZone = 'UTC'")


def sibling(con: Any) -> Any:
    """A second connection to con's database, as connect set it up, for work on another
    thread: its own temp tables, and queries that run beside con's."""
    database = con.execute("SELECT current_database()").fetchone()[0]
    other = con.cursor()
    _session_settings(other)
    other.execute(f'USE "{database}"')
    return other


def _attach(con: Any, out: Out) -> bool:
    """Use OUT/census.duckdb when it was written for the current manifest and rule files."""
    import duckdb

    if not out.database.is_file() or not as_written(out):
        return False
    try:
        con.execute(f"SET file_search_path = {quote(out.root)}")
        con.execute(f"ATTACH {quote(out.database)} AS census (READ_ONLY)")
        row = con.execute("SELECT stamp FROM census._census").fetchone()
    except duckdb.Error:
        return False
    if row is None or row[0] != stamp(out):
        con.execute("DETACH census")
        return False
    con.execute("USE census")
    return True


def database_digest(out: Out) -> str | None:
    """The SHA-256 of OUT/census.duckdb's bytes (about a megabyte); None when it is missing."""
    import hashlib

    try:
        return hashlib.sha256(out.database.read_bytes()).hexdigest()
    except OSError:
        return None


def as_written(out: Out) -> bool:
    """Whether census.duckdb is the file census last wrote. The DuckDB CLI opens it read-write
    unless told -readonly, so a view or macro replaced there (`CREATE OR REPLACE MACRO z95()
    AS 1.0`) stayed under a stamp that still matched and changed every figure census read."""
    known = read_state(out, DATABASE_STATE).get("sha256")
    return known is not None and known == database_digest(out)


def stamp(out: Out) -> str:
    """What census.duckdb's views depend on: the table views and the SQL that defines the rest
    (a census upgrade with new views makes an old census.duckdb stale too)."""
    return views_stamp(table_views(out))


def views_stamp(tables: list[str]) -> str:
    """The stamp of views made of these table views and this census's SQL. The table views
    name OUT's files by absolute path (a moved OUT's census.duckdb is stale) and carry the
    schema's columns: a census that adds one (checks.estimator) may change no other view."""
    import hashlib

    h = hashlib.sha256()
    for statement in [*tables, *_database_views()]:
        h.update(statement.encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _register_datasets(con: Any, out: Out) -> None:
    import pyarrow.dataset as ds

    from pipeline.schema import arrow_schema

    manifest = out.manifest()
    for table in TABLES.values():
        files = [str(out.tables / rel) for rel in manifest[table.name]]
        schema = arrow_schema(table)
        data = ds.dataset(files, format="parquet", schema=schema) if files else schema.empty_table()
        con.register(f"_{table.name}_files", data)
        con.execute(
            f'CREATE OR REPLACE VIEW "{table.name}" AS SELECT {_columns(table)} '
            f'FROM "_{table.name}_files"'
        )


def write_database(out: Out) -> None:
    """OUT/census.duckdb: the same views over OUT's files by absolute path, so
    `duckdb OUT/census.duckdb` answers from any directory (spec §6). A copied or moved OUT
    is stale until the next census command on it rebuilds the views for its new place.

    The derived views do not name files, so when the census.duckdb in place was made with the
    same SQL, a copy of it keeps them and only the table views whose committed file lists
    changed are replaced: binding every view again costs more than the rest of a night's check.
    """
    import shutil

    import duckdb

    config: dict[str, Any] = {"storage_compatibility_version": STORAGE_VERSION}
    # A file altered since census wrote it gets every view and macro made again.
    untouched = as_written(out)
    with _building(out) as temp:
        try:
            if out.database.is_file():
                shutil.copyfile(out.database, temp)
            con = duckdb.connect(str(temp), config=config)
        except duckdb.Error:  # a damaged census.duckdb is made anew
            _unlink_database(temp)
            con = duckdb.connect(str(temp), config=config)
        try:
            views, bound = _made_with(con)
            tables = table_views(out)
            if views == _views_hash() and untouched:
                statements = [s for s in tables if s not in bound]
            else:
                statements = tables + _database_views()
            for statement in statements:
                con.execute(statement)
            # Which manifest and SQL the views were made for: a stale file is never used.
            con.execute(
                "CREATE OR REPLACE TABLE _census AS SELECT $stamp AS stamp, $views AS views, "
                "$tables AS tables",
                {"stamp": views_stamp(tables), "views": _views_hash(), "tables": tables},
            )
            con.execute("CHECKPOINT")
        finally:
            con.close()


# What DuckDB does not read literally in a database path: '?' starts its options, and a
# backslash is a folder separator to it, on every system.
_DATABASE_PATH_MARKS = ("?", "\\")


@contextmanager
def _building(out: Out) -> Iterator[Path]:
    """Where census.duckdb is built before it replaces OUT's. DuckDB reads a `?` in a database
    path as the start of its options and then cannot open the WAL beside it (it wrote none at
    `OUT?x` ever), and a `\\` as a folder separator (`OUT\\x` opened `OUT/x`), so under such a
    path it is built in a temporary folder and copied in."""
    import shutil
    import tempfile

    temp = out.database.with_name("census.duckdb.tmp")
    _unlink_database(temp)
    if not any(mark in str(out.root) for mark in _DATABASE_PATH_MARKS):
        yield temp
        os.replace(temp, out.database)
        return
    folder = tempfile.mkdtemp(prefix="census-db-")
    try:
        built = Path(folder) / temp.name
        yield built
        shutil.copyfile(built, temp)
        os.replace(temp, out.database)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _unlink_database(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + ".wal")):
        leftover.unlink(missing_ok=True)


def _made_with(con: Any) -> tuple[str | None, set[str]]:
    """The derived views' hash and the table views' statements a census.duckdb records;
    nothing for a new file or one made otherwise."""
    import duckdb

    try:
        row = con.execute("SELECT views, tables FROM _census").fetchone()
    except duckdb.Error:
        return None, set()
    return (str(row[0]), set(row[1] or [])) if row else (None, set())


# census sql's selected_point() in census.duckdb too, as its default: the latest checked point
# (the latest point when none is checked). The README's queries then run as written in the
# DuckDB CLI, where the macro did not exist.
SELECTED_POINT = (
    "CREATE OR REPLACE MACRO selected_point() AS coalesce("
    "(SELECT point FROM points WHERE checked ORDER BY position DESC LIMIT 1), "
    "(SELECT point FROM points ORDER BY position DESC LIMIT 1))"
)


def _database_views() -> list[str]:
    return [*derived_views(), SELECTED_POINT]


def _views_hash() -> str:
    import hashlib

    return hashlib.sha256("\n".join(_database_views()).encode()).hexdigest()
