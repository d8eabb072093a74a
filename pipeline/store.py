"""OUT's layout, Parquet writing, and the atomic commit of everything a command writes.

    OUT/tables/{table}/written_by={writer}/part-*.parquet   one Parquet dataset per table
    OUT/tables/{table}/written_by={writer}/empty.parquet    (a table with no rows yet)
    OUT/manifest.json                                        the files that are committed
    OUT/staging/{writer}/                                    what a writer is still writing
    OUT/state/                               crawl caches (file metadata, git HEADs, tree memos)
    OUT/census.duckdb                                        views over the committed files
    OUT/.lock                                  writers: exclusive, or shared by a night's shards

A writer (a crawl run, a check, a prune or a compaction) writes its files under staging/,
moves them into tables/, and commits by replacing manifest.json, which lists every committed
file; readers only ever read the files the manifest lists. A writer that dies part-way
leaves OUT reading exactly as before, and the next writer sweeps what it left.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.errors import OutError, damaged_out, os_trouble
from pipeline.schema import (
    RULE_RESULTS,
    RUNS,
    TABLES,
    Table,
    arrow_schema,
    duckdb_type,
)

# Rows buffered per table before a row group is written: bounds memory, keeps groups large.
BATCH_ROWS = 65_536
# Row dicts held per table before DuckDB takes them: a dict costs many times its row in DuckDB.
PENDING_ROWS = 10_000
PARTITION = "written_by"
MANIFEST_FORMAT = 2
# What OUT holds of its own at its top (Out.owns): no output option may write over these.
_OWN_FOLDERS = {"tables", "state", "staging"}
_OWN_FILE_PREFIXES = ("manifest.json", "census.duckdb", ".")


def _utf8(text: str) -> bool:
    """Whether `text` is UTF-8 text (a file system name may carry undecodable bytes as lone
    surrogates); checked here, not with sources.tree's storable_name, to keep the readers'
    imports off the path of the commands that only read OUT."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class Out:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.root = Path(path).resolve()
        if not _utf8(str(self.root)):
            from pipeline.sources.tree import storable_name

            shown = storable_name(str(self.root))
            # DuckDB opens only UTF-8 paths, and the views name OUT's files by absolute path.
            raise OutError(
                f"OUT {shown} lies at a path that is not UTF-8 text, which DuckDB needs; "
                "give --out a folder whose path is UTF-8"
            )

    @property
    def tables(self) -> Path:
        return self.root / "tables"

    @property
    def database(self) -> Path:
        return self.root / "census.duckdb"

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def state(self, name: str) -> Path:
        return self.root / "state" / name

    def statcache(self, shard: str = "") -> Path:
        return self.state(f"statcache{'-' + shard if shard else ''}.parquet")

    def exists(self) -> bool:
        return self.manifest_path.is_file() or (self.tables / RUNS.name).is_dir()

    def require_folder(self) -> None:
        """OUT is a folder, or nothing yet: a file there is refused in words, not errno's."""
        if self.root.exists() and not self.root.is_dir():
            raise OutError(f"{self.root} is a file, not a folder; give --out a folder for OUT")

    def require(self) -> None:
        self.require_folder()
        if not self.exists():
            raise OutError(
                f"{self.root} holds no census runs; run 'census crawl ROOT --out {self.root}' first"
            )

    def owns(self, path: Path) -> bool:
        """Whether writing `path` would write over OUT's own data: its tables, state, staging,
        manifest, database or locks (a report or a SARIF file beside them is the user's)."""
        target = Path(os.path.realpath(path))
        if not target.is_relative_to(self.root) or target == self.root:
            return False
        first = target.relative_to(self.root).parts[0]
        return first in _OWN_FOLDERS or first.startswith(_OWN_FILE_PREFIXES)

    def _holds_census(self) -> bool:
        """A census run is committed here, or a census lock says one is (or was) writing."""
        return self.exists() or (self.root / ".lock").exists()

    def foreign_folder(self) -> str | None:
        """A folder named like one of OUT's own (tables, state, staging) in a folder that holds
        no census run and no census lock: the user's, which a crawl would write into and
        whose staging/ its sweep deletes; None when none."""
        if self._holds_census():
            return None
        return next((n for n in sorted(_OWN_FOLDERS) if (self.root / n).exists()), None)

    def corpus_inside(self, within: tuple[str, ...] = ()) -> str | None:
        """The first entry of OUT's folder, not OUT's own, that may hold what a crawl reads: a
        Markdown document, or a folder that is, or holds, one or a `docs/` (sessions), or that
        is a session folder by its path (`within`: OUT's path below the root, so that OUT at
        docs/research/ holding `x-brainstorm/ops/` holds a session); None when none. A crawl
        leaves an OUT inside its root out of the walk, so such an entry would go unread.
        Folders are looked into whatever their name: the crawl reads sessions under `.old/`
        too, and only OUT's lock files and its own folders are OUT's."""
        from pipeline.parse.lexical import is_markdown
        from pipeline.sources.tree import is_folder_entry

        try:
            with os.scandir(self.root) as it:
                names = sorted((e.name, is_folder_entry(e)) for e in it)
        except OSError:
            return None  # no folder yet (or one not listable: the crawl says so itself)
        # Before OUT holds a run, a folder named like one of its own is the user's (a harvested
        # session `staging/` that the crawl's sweep would delete); after, census writes no
        # Markdown in its own folders, so one holding some holds what the crawl would not read.
        # Its lock says so too: the first night's other shard is writing its staging/ there.
        census = self._holds_census()
        for name, is_dir in names:
            if name == ".git" or (not is_dir and name.startswith(_OWN_FILE_PREFIXES)):
                continue  # an OUT kept in git: git's own files are no documents
            if not is_dir:
                if is_markdown(name):
                    return name
                continue
            if name.lower() == "docs":
                return name
            own = census and name in _OWN_FOLDERS
            found = _corpus_in(self.root, name, () if own else within, by_path=not own)
            if found is not None:
                return found
        return None

    def manifest(self) -> dict[str, list[str]]:
        """Committed files per table, relative to OUT/tables."""
        try:
            data = json.loads(self.manifest_path.read_text())
        except FileNotFoundError:
            if self._checked_since_manifests():
                # Read as an OUT from before manifest.json, its checked points would be decided
                # again from whatever files lie in tables/: a night's results are facts.
                raise OutError(
                    f"OUT is damaged: {self.manifest_path} is missing, yet OUT holds checked "
                    "census points; restore OUT from a copy, or crawl into a new --out"
                ) from None
            return _legacy_manifest(self)
        except ValueError as err:  # other OSErrors (permissions, open files) are the machine's
            raise OutError(f"{self.manifest_path} cannot be read ({err}); OUT is damaged") from None
        files = data.get("files") if isinstance(data, dict) else None
        made = data.get("format") if isinstance(data, dict) else None
        if isinstance(made, int) and made > MANIFEST_FORMAT:
            # Its tables may mean what this census does not know, and a commit by it would
            # drop from the manifest every table it has no name for.
            raise OutError(
                f"OUT was written by a newer census (manifest format {made}; this one reads up "
                f"to {MANIFEST_FORMAT}): use that census, or crawl into a new --out"
            )
        # Every commit lists a runs file (a prune keeps one point): a manifest listing none, or
        # naming files by anything but their paths, was written by another tool. Read as
        # empty, every committed file would be swept away as stale (found by a hunt).
        if (
            not isinstance(files, dict)
            or not files.get(RUNS.name)
            or not all(
                isinstance(listed, list) and all(isinstance(rel, str) for rel in listed)
                for listed in files.values()
            )
        ):
            raise OutError(f"{self.manifest_path} is not a census manifest; OUT is damaged")
        return {name: list(files.get(name, [])) for name in TABLES}

    def _checked_since_manifests(self) -> bool:
        """Whether check wrote here a table that came with manifest.json (all but rule_results)."""
        return any(
            any((self.tables / table.name).glob(f"{PARTITION}=*"))
            for table in TABLES.values()
            if table.writer == "check" and table is not RULE_RESULTS
        )

    def files(self, table: str) -> list[Path]:
        """The committed Parquet files of one table, as absolute paths."""
        return [self.tables / rel for rel in self.manifest()[table]]

    def lock(self, shared: bool = False) -> Lock:
        """The writers' lock: exclusive for a whole run or a check, shared among shards."""
        return Lock(self.root / ".lock", shared)

    def shard_lock(self, shard: str) -> Lock:
        return Lock(self.root / f".lock-{shard}")

    def commit_lock(self) -> Lock:
        """Held while a writer updates the manifest, so that shards commit one at a time."""
        return Lock(self.root / ".commit-lock", wait=True)

    def sweep(self) -> None:
        """Remove what writers that died part-way left, and files no longer committed.

        Call under the exclusive lock: no other writer can be between its move and its commit.
        """
        shutil.rmtree(self.root / "staging", ignore_errors=True)
        if not self.manifest_path.is_file():
            return
        kept = {rel for files in self.manifest().values() for rel in files}
        for table in TABLES.values():
            for part in (self.tables / table.name).glob(f"{PARTITION}=*"):
                names = {f"{table.name}/{part.name}/{f.name}" for f in part.iterdir()}
                if not names & kept:
                    shutil.rmtree(part, ignore_errors=True)

    def stored_snapshot_ids(self) -> set[str]:
        ids: set[str] = set()
        for file in self.files("snapshots"):
            ids.update(read_committed(file, ["snapshot_id"]).column(0).to_pylist())
        return ids

    def require_whole(self) -> None:
        """Refuse, as damaged, an OUT that lists a table file gone or cut short, told by each
        file's Parquet magic bytes and footer length, not its data (an unchanged rerun stays
        cheap): a crawl reads few of OUT's files, and committed its run onto such an OUT."""
        for files in self.manifest().values():
            for rel in files:
                problem = _not_parquet(self.tables / rel)
                if problem is not None:
                    raise OutError(damaged_out(problem))


def _corpus_in(root: Path, name: str, within: tuple[str, ...], by_path: bool) -> str | None:
    """The first folder under root/name that holds Markdown or a `docs/`, or (`by_path`) is a
    session folder by its path below the crawl's root (`within` + its path below OUT)."""
    from pipeline.discover import session_matches
    from pipeline.parse.lexical import is_markdown

    for folder, dirs, files in os.walk(root / name):
        dirs[:] = [d for d in dirs if d != ".git"]
        rel = os.path.relpath(folder, root)
        # A session is found by its path alone (spec §2), Markdown or none.
        if by_path and next(session_matches([*within, *rel.split(os.sep)]), None) is not None:
            return rel
        if any(d.lower() == "docs" for d in dirs) or any(is_markdown(f) for f in files):
            return rel
    return None


def read_parquet(path: Path | str, columns: list[str] | None = None) -> Any:
    """One Parquet file as an Arrow table. Not pq.read_table: that goes through
    pyarrow.dataset, whose import costs a crawl about 0.16 s beyond pandas (which pyarrow
    imports anyway with the first array it builds)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as parquet:
        return parquet.read(columns=columns)


def read_committed(path: Path, columns: list[str] | None = None) -> Any:
    """One of OUT's committed table files, as read_parquet reads it; one that cannot be read
    (garbled, gone) is damage to OUT, said as check says it, not a bug of the census."""
    import pyarrow as pa

    try:
        return read_parquet(path, columns)
    except (OSError, pa.ArrowException) as err:
        if os_trouble(err) is not None and not isinstance(err, FileNotFoundError):
            raise  # the machine's (a permission, too many open files): said as such
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise OutError(damaged_out(f"{first.strip()} in '{path}'")) from err


# Every Parquet file begins and ends with these bytes; a footer length and they close it.
_PARQUET_MAGIC = b"PAR1"


def _not_parquet(path: Path) -> str | None:
    """Why `path` cannot be a whole Parquet file (gone, or cut short: no footer at its end),
    by its first and last bytes alone; None when it may be one."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(4)
            handle.seek(max(size - 8, 0))
            tail = handle.read(8)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return f"no file at '{path}'"
    footer = int.from_bytes(tail[:4], "little") if size >= 12 else size
    if head != _PARQUET_MAGIC or tail[4:] != _PARQUET_MAGIC or footer > size - 12:
        return f"no Parquet footer at the end of '{path}', {size} bytes: cut short or overwritten"
    return None


def _legacy_manifest(out: Out) -> dict[str, list[str]]:
    """An OUT written before manifest.json: the partitions whose run has a `runs` row.

    Its rule_results had another shape (one row per gate); they are left out and re-checked.
    """
    runs = out.tables / RUNS.name
    committed = {written_by(p.name) for p in runs.glob(f"{PARTITION}=*") if p.is_dir()}
    found: dict[str, list[str]] = {}
    for table in TABLES.values():
        found[table.name] = []
        if table is RULE_RESULTS or table.writer != "crawl":
            continue
        for part in sorted((out.tables / table.name).glob(f"{PARTITION}=*")):
            if written_by(part.name) in committed:
                found[table.name] += [
                    f"{table.name}/{part.name}/{f.name}" for f in part.glob("*.parquet")
                ]
    return found


class Lock:
    """An advisory lock on OUT; a writer that cannot have it refuses with a clear message."""

    def __init__(self, path: Path, shared: bool = False, wait: bool = False) -> None:
        self.path = path
        self.shared = shared
        self.wait = wait
        self.handle: Any = None

    def __enter__(self) -> Lock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "a+")
        mode = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
        try:
            fcntl.flock(self.handle, mode if self.wait else mode | fcntl.LOCK_NB)
        except BlockingIOError:
            self.handle.close()
            raise OutError(
                f"another census process is writing to {self.path.parent}; wait for it to finish "
                "or use another --out"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()


class PartitionWriter:
    """Writes one writer's partition (one directory per table) in bounded row groups.

    Arrow tables (the workers' parsed rows) go to part-0.parquet through pyarrow; row dicts
    made in this process (observations, the runs row, run-level issues) go to part-1.parquet
    through DuckDB, because building an Arrow array from Python objects imports pandas
    (about 0.6 s, most of an unchanged rerun's own work). A table with no rows gets no file.
    """

    def __init__(self, directory: Path, tables: Iterable[Table]) -> None:
        self.directory = directory
        self.tables = {t.name: t for t in tables}
        self._buffers: dict[str, list[Any]] = {name: [] for name in self.tables}
        self._buffered: dict[str, int] = dict.fromkeys(self.tables, 0)
        self._writers: dict[str, Any] = {}
        self._row_writer: QueryWriter | None = None
        self.rows: dict[str, int] = dict.fromkeys(self.tables, 0)

    def write(self, name: str, batch: Any) -> None:
        """Add an Arrow table (or a list of row dicts) to table `name`."""
        if isinstance(batch, list):
            self._rows().add_rows(name, batch)
            self.rows[name] += len(batch)
            return
        if batch.num_rows == 0:
            return
        self._buffers[name].append(batch)
        self._buffered[name] += batch.num_rows
        self.rows[name] += batch.num_rows
        if self._buffered[name] >= BATCH_ROWS:
            self._flush(name)

    def _rows(self) -> QueryWriter:
        if self._row_writer is None:
            from pipeline.engine import in_memory

            con = in_memory()
            self._row_writer = QueryWriter(con, self.directory, self.tables.values(), "part-1")
        return self._row_writer

    def _flush(self, name: str) -> None:
        if not self._buffers[name]:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = arrow_schema(self.tables[name])
        if name not in self._writers:
            folder = self.directory / name
            folder.mkdir(parents=True, exist_ok=True)
            self._writers[name] = pq.ParquetWriter(
                folder / "part-0.parquet", schema, compression="zstd"
            )
        table = pa.concat_tables(self._buffers[name]).cast(schema)
        self._writers[name].write_table(table, row_group_size=max(table.num_rows, 1))
        self._buffers[name] = []
        self._buffered[name] = 0

    def close(self) -> None:
        """Flush everything; a table with no rows gets no file."""
        for name in self.tables:
            self._flush(name)
            if name in self._writers:
                self._writers[name].close()
        if self._row_writer is not None:
            self._row_writer.close()
            self._row_writer.con.close()


class QueryWriter:
    """Writes a writer's partition straight from DuckDB: what each query finds is kept in a
    temp table of the table's declared column types, and close() copies each table to one
    Parquet file. A check writes only what its queries found, and building Arrow tables in
    Python would import pyarrow and, through it, pandas (about 0.6 s of every check)."""

    def __init__(
        self, con: Any, directory: Path, tables: Iterable[Table], file: str = "part-0"
    ) -> None:
        self.con = con
        self.directory = directory
        self.file = f"{file}.parquet"
        self.tables = {t.name: t for t in tables}
        self._pending: dict[str, list[dict[str, Any]]] = {name: [] for name in self.tables}
        self.rows: dict[str, int] = dict.fromkeys(self.tables, 0)
        for table in self.tables.values():
            columns = ", ".join(f'"{c.name}" {duckdb_type(c.type)}' for c in table.columns)
            con.execute(f"CREATE OR REPLACE TEMP TABLE {self._staged(table.name)} ({columns})")

    @staticmethod
    def _staged(name: str) -> str:
        return f'temp.main."staged_{name}"'

    def write(self, name: str, query: str, params: dict[str, Any] | None = None) -> int:
        """Add the rows of `query` (in its order, matched to the columns by name) to table
        `name`; returns how many there were."""
        added = self.con.execute(
            f"INSERT INTO {self._staged(name)} BY NAME ({query})", params or {}
        ).fetchone()
        count = int(added[0]) if added else 0
        self.rows[name] += count
        return count

    def rows_so_far(self, name: str) -> str:
        """The temp table of table `name`'s rows written so far (added row dicts included),
        for a query that reads them back."""
        self._insert(name)
        return self._staged(name)

    def add_rows(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Row dicts for table `name`, added in batches of PENDING_ROWS and by close()."""
        self._pending[name].extend(rows)
        if len(self._pending[name]) >= PENDING_ROWS:
            self._insert(name)

    def _insert(self, name: str) -> None:
        rows, self._pending[name] = self._pending[name], []
        if rows:
            self.write(name, *rows_query(self.tables[name], rows))

    def close(self) -> None:
        """Write each table's rows to its one file; a table with no rows gets no file."""
        from pipeline.engine import quote

        for name in self.tables:
            self._insert(name)
            if self.rows[name]:
                target = self.directory / name / self.file
                target.parent.mkdir(parents=True, exist_ok=True)
                copy = f"COPY {self._staged(name)} TO {quote(target)}"
                self.con.execute(f"{copy} (FORMAT parquet, COMPRESSION zstd)")
            self.con.execute(f"DROP TABLE {self._staged(name)}")


def rows_query(table: Table, rows: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """A query of the given row dicts as `table`'s columns, and its parameters: one statement,
    not a statement per row. Each column travels as one list parameter, and unnest zips them
    back into rows; a column of one value (the run id, the time) travels once."""
    params: dict[str, Any] = {}
    values = []
    for i, column in enumerate(table.columns):
        found = _duckdb_values(column.type, [row.get(column.name) for row in rows])
        # The first column always unnests when there are several rows: rows alike in every
        # column would otherwise come back as one.
        if found.count(found[0]) == len(found) and (i > 0 or len(rows) == 1):
            params[f"c{i}"] = found[0]
            values.append(f'$c{i}::{duckdb_type(column.type)} AS "{column.name}"')
        else:
            params[f"c{i}"] = found
            values.append(f'unnest($c{i}) AS "{column.name}"')
    return f"SELECT {', '.join(values)}", params


def _duckdb_values(type_: str, values: list[Any]) -> list[Any]:
    """A column's Python values as DuckDB takes them: a map given as (key, value) pairs, as
    Arrow takes it, becomes DuckDB's {key: [...], value: [...]}."""
    if not type_.startswith("map<"):
        return values
    pairs = [None if v is None else list(v.items() if isinstance(v, dict) else v) for v in values]
    return [
        None if p is None else {"key": [k for k, _ in p], "value": [v for _, v in p]} for p in pairs
    ]


# How new_run_id spells a run id (a census point may not be named so: --run ID reads it as
# the point holding that run).
RUN_ID_RE = re.compile(r"\d{8}T\d{6}\.\d{6}Z-[0-9a-f]{6}")
# A run's `shard` label as --shard K/N writes it: `K-of-N`.
SHARD_LABEL_RE = re.compile(r"(\d+)-of-(\d+)")


def new_run_id() -> str:
    """A UTC start time to the microsecond, then a random suffix: ids sort in start order,
    even for runs that start within one second (a replay's two arms, a test's reruns)."""
    now = datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%S}.{now:%f}Z-{os.urandom(3).hex()}"


def started_at(writer_id: str) -> str | None:
    """When a writer (a run, check-… or compact-…) started, as new_run_id spelt it (such
    times sort); None for an id without one."""
    found = re.search(r"\d{8}T\d{6}\.\d{6}Z", writer_id)
    return found.group(0) if found else None


def written_by(partition: str) -> str:
    """The writer of a partition, from its folder name or a path through it
    (table/written_by=id/part-0.parquet)."""
    folder = next(part for part in partition.split("/") if part.startswith(f"{PARTITION}="))
    return folder.split("=", 1)[1]


# The writers this process committed to an OUT: a Ctrl-C after a commit must not be told
# as one that left OUT as it was.
COMMITTED: list[str] = []


def crash_point(name: str) -> None:
    """Where the atomicity tests kill the process (CENSUS_KILL_AT=name, with SIGKILL or the
    signal CENSUS_KILL_WITH names, such as SIGINT for Ctrl-C); a no-op otherwise."""
    if os.environ.get("CENSUS_KILL_AT") == name:
        os.kill(os.getpid(), signal.Signals[os.environ.get("CENSUS_KILL_WITH", "SIGKILL")])


def write_manifest(out: Out, files: dict[str, list[str]]) -> None:
    """The commit point: manifest.json replaced in one rename."""
    body = {"format": MANIFEST_FORMAT, "files": {t: files.get(t, []) for t in TABLES}}
    temp = out.manifest_path.with_suffix(".json.tmp")
    with open(temp, "w") as handle:
        json.dump(body, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, out.manifest_path)


def publish(
    out: Out,
    staging: Path,
    writer_id: str,
    replace: dict[str, list[str]] | None = None,
) -> None:
    """Move a writer's staged tables into tables/ and commit them (call under commit_lock).

    `replace` names committed files (per table) that the new ones supersede: a compaction's
    or a prune's inputs. They leave the manifest in the same commit, and are deleted once
    census.duckdb names their replacements.
    """
    crash_point("staged")
    manifest = out.manifest()
    added: dict[str, list[str]] = {}
    for number, source in enumerate(sorted(p for p in staging.iterdir() if p.is_dir())):
        target = out.tables / source.name / f"{PARTITION}={writer_id}"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        added[source.name] = [f"{source.name}/{target.name}/{f.name}" for f in target.iterdir()]
        if number == 2:
            crash_point("partly-published")
    crash_point("before-commit")
    for table, gone in (replace or {}).items():
        dropped = set(gone)
        manifest[table] = [rel for rel in manifest[table] if rel not in dropped]
    for table, files in added.items():
        manifest[table] = manifest.get(table, []) + files
    # The tables this writer keeps (a check its results, a crawl the content, a compaction
    # or a prune every table): those still without a file get an empty one.
    kinds = {"check"} if writer_id.startswith("check-") else {"crawl"}
    kinds = {"check", "crawl"} if writer_id.startswith("compact-") else kinds
    for name, kept in TABLES.items():
        if kept.writer in kinds and not manifest.get(name):
            manifest[name] = [_write_empty(out, kept, writer_id)]
    write_manifest(out, manifest)
    COMMITTED.append(writer_id)
    crash_point("committed")
    shutil.rmtree(staging, ignore_errors=True)


def _write_empty(out: Out, table: Table, writer_id: str) -> str:
    """A table with no rows yet gets one Parquet file with its columns and no rows: spec §6
    promises a dataset per table under tables/{table}/, and a Parquet reader given an empty
    folder fails (`No files found`) where it should count zero."""

    from pipeline.engine import empty_select, in_memory, quote

    folder = out.tables / table.name / f"{PARTITION}={writer_id}"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "empty.parquet"
    copy = f"COPY ({empty_select(table)}) TO {quote(target)} (FORMAT parquet, COMPRESSION zstd)"
    with in_memory() as con:
        con.execute(copy)
    return f"{table.name}/{folder.name}/{target.name}"


def write_statcache(out: Out, entries: dict[str, tuple[str, str]], shard: str = "") -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    keys = sorted(entries)
    table = pa.table(
        {
            "key": keys,
            "signature": [entries[k][0] for k in keys],
            "snapshot_id": [entries[k][1] for k in keys],
        }
    )
    target = out.statcache(shard)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_suffix(".tmp")
    pq.write_table(table, temp)
    os.replace(temp, target)


def read_statcache(out: Out, shard: str = "") -> dict[str, tuple[str, str]]:
    path = out.statcache(shard)
    if not path.exists():
        return {}
    try:
        table = read_parquet(path).to_pydict()
    except Exception:  # A damaged cache only costs a re-read; never fail the run for it.
        return {}
    return dict(
        zip(table["key"], zip(table["signature"], table["snapshot_id"], strict=True), strict=True)
    )


# What census.duckdb was last written for, and its digest as written (pipeline.aftercommit).
DATABASE_STATE = "database.json"


def read_state(out: Out, name: str) -> dict[str, Any]:
    """A JSON cache under OUT/state; empty when missing or damaged (it only saves work)."""
    try:
        data: dict[str, Any] = json.loads(out.state(name).read_text())
    except (OSError, ValueError):
        return {}
    return data


def write_state(out: Out, name: str, data: dict[str, Any]) -> None:
    target = out.state(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_suffix(".tmp")
    temp.write_text(json.dumps(data, separators=(",", ":")))
    os.replace(temp, target)
