"""DuckDB over OUT: a view per table, the derived views of queries/views/, query files.

Commands open an in-memory DuckDB with these views (so nothing locks census.duckdb),
and each run commit also writes the same views into OUT/census.duckdb for users.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pipeline.resources import queries_dir
from pipeline.schema import RULE_RESULTS, RUNS, TABLES, Table, duckdb_ddl, duckdb_type
from pipeline.store import PARTITION, Out


def quote(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _scan(out: Out, table: Table) -> str:
    glob = out.tables / table.name / f"{PARTITION}=*" / "*.parquet"
    return (
        f"read_parquet({quote(glob)}, hive_partitioning = true, "
        f"hive_types = {{'{PARTITION}': VARCHAR}})"
    )


def _empty(table: Table) -> str:
    cols = ", ".join(f'CAST(NULL AS {duckdb_type(c.type)}) AS "{c.name}"' for c in table.columns)
    return f"SELECT {cols} WHERE false"


def table_views(out: Out) -> list[str]:
    """CREATE VIEW statements for every table, showing committed runs only."""
    statements = []
    has_runs = any((out.tables / RUNS.name).glob(f"{PARTITION}=*/*.parquet"))
    committed = f"(SELECT {PARTITION} FROM {_scan(out, RUNS)})"
    for table in TABLES.values():
        has_files = any((out.tables / table.name).glob(f"{PARTITION}=*/*.parquet"))
        if not has_files or not has_runs:
            body = _empty(table)
        elif table is RUNS or table is RULE_RESULTS:
            body = f"SELECT * EXCLUDE ({PARTITION}) FROM {_scan(out, table)}"
        else:
            body = (
                f"SELECT * EXCLUDE ({PARTITION}) FROM {_scan(out, table)} "
                f"WHERE {PARTITION} IN {committed}"
            )
        statements.append(f'CREATE OR REPLACE VIEW "{table.name}" AS {body}')
    return statements


def derived_views() -> list[str]:
    """The views users query by name (rule_rates, sync_pairs, fork_lifetimes, …)."""
    folder = queries_dir() / "views"
    return [p.read_text() for p in sorted(folder.glob("*.sql"))]


def fetch_dicts(con: Any, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    """A query's rows as dicts keyed by column name."""
    cursor = con.execute(query, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def connect(out: Out | None = None) -> Any:
    """An in-memory DuckDB with OUT's views (or empty tables when out is None, for detect)."""
    import duckdb

    con = duckdb.connect(":memory:", config={"threads": str(os.cpu_count() or 1)})
    if out is None:
        for table in TABLES.values():
            con.execute(duckdb_ddl(table))
    else:
        for statement in table_views(out):
            con.execute(statement)
    for statement in derived_views():
        con.execute(statement)
    return con


def write_database(out: Out) -> None:
    """OUT/census.duckdb: the same views, so `duckdb OUT/census.duckdb` answers at once."""
    import duckdb

    temp = out.database.with_name("census.duckdb.tmp")
    for leftover in (temp, temp.with_name(temp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    con = duckdb.connect(str(temp))
    try:
        for statement in [*table_views(out), *derived_views()]:
            con.execute(statement)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(temp, out.database)
