"""OUT's layout, Parquet writing, the atomic run commit, and census.duckdb's views.

    OUT/tables/{table}/written_by={run_id}/part-{n}.parquet   one dataset per table
    OUT/staging/{run_id}/                                      a run being written
    OUT/state/statcache[-K-of-N].parquet                       file metadata → snapshot id
    OUT/census.duckdb                                          views over the datasets
    OUT/.lock                                       writers: exclusive, or shared by shards

A run writes under staging/, moves its partitions into tables/, and writes its
`runs` row last; the views show only partitions whose run has a `runs` row, so
a run that dies part-way leaves nothing visible, and the next writer sweeps it.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline.schema import RULE_RESULTS, RUNS, TABLES, Table, arrow_schema, arrow_table

# Rows buffered per table before a row group is written: bounds memory, keeps groups large.
BATCH_ROWS = 65_536
PARTITION = "written_by"


class OutError(Exception):
    """OUT cannot be used (locked, not a census output, unwritable)."""


class Out:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.root = Path(path).resolve()

    @property
    def tables(self) -> Path:
        return self.root / "tables"

    @property
    def database(self) -> Path:
        return self.root / "census.duckdb"

    def statcache(self, shard: str = "") -> Path:
        return self.root / "state" / f"statcache{'-' + shard if shard else ''}.parquet"

    def exists(self) -> bool:
        return (self.tables / RUNS.name).is_dir()

    def require(self) -> None:
        if not self.exists():
            raise OutError(
                f"{self.root} holds no census runs; run 'census crawl ROOT --out {self.root}' first"
            )

    def committed_runs(self) -> list[str]:
        runs_dir = self.tables / RUNS.name
        if not runs_dir.is_dir():
            return []
        return sorted(
            p.name.split("=", 1)[1] for p in runs_dir.glob(f"{PARTITION}=*") if p.is_dir()
        )

    def lock(self, shared: bool = False) -> Lock:
        """The writers' lock: exclusive for a whole run or a check, shared among shards."""
        return Lock(self.root / ".lock", shared)

    def shard_lock(self, shard: str) -> Lock:
        return Lock(self.root / f".lock-{shard}")

    def commit_lock(self) -> Lock:
        """Held briefly while a run publishes, so that shards commit one at a time."""
        return Lock(self.root / ".commit-lock", wait=True)

    def sweep(self) -> None:
        """Remove what runs that died part-way left behind (call under the lock)."""
        shutil.rmtree(self.root / "staging", ignore_errors=True)
        committed = set(self.committed_runs())
        for table in TABLES.values():
            if table is RULE_RESULTS:
                continue
            for part in (self.tables / table.name).glob(f"{PARTITION}=*"):
                if part.name.split("=", 1)[1] not in committed:
                    shutil.rmtree(part, ignore_errors=True)

    def stored_snapshot_ids(self) -> set[str]:
        import pyarrow.parquet as pq

        ids: set[str] = set()
        committed = set(self.committed_runs())
        for part in (self.tables / "snapshots").glob(f"{PARTITION}=*"):
            if part.name.split("=", 1)[1] not in committed:
                continue
            for file in part.glob("*.parquet"):
                ids.update(pq.read_table(file, columns=["snapshot_id"]).column(0).to_pylist())
        return ids


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
    """Writes one partition (one directory per table) in bounded row groups."""

    def __init__(self, directory: Path, tables: list[Table]) -> None:
        self.directory = directory
        self.tables = {t.name: t for t in tables}
        self._buffers: dict[str, list[Any]] = {name: [] for name in self.tables}
        self._buffered: dict[str, int] = dict.fromkeys(self.tables, 0)
        self._writers: dict[str, Any] = {}
        self.rows: dict[str, int] = dict.fromkeys(self.tables, 0)

    def write(self, name: str, batch: Any) -> None:
        """Add an Arrow table (or a list of row dicts) to table `name`."""
        if isinstance(batch, list):
            batch = arrow_table(self.tables[name], batch)
        if batch.num_rows == 0:
            return
        self._buffers[name].append(batch)
        self._buffered[name] += batch.num_rows
        self.rows[name] += batch.num_rows
        if self._buffered[name] >= BATCH_ROWS:
            self._flush(name)

    def _flush(self, name: str) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._buffers[name] and name in self._writers:
            return
        schema = arrow_schema(self.tables[name])
        if name not in self._writers:
            folder = self.directory / name
            folder.mkdir(parents=True, exist_ok=True)
            self._writers[name] = pq.ParquetWriter(
                folder / "part-0.parquet", schema, compression="zstd"
            )
        if self._buffers[name]:
            table = pa.concat_tables(self._buffers[name]).cast(schema)
            self._writers[name].write_table(table, row_group_size=max(table.num_rows, 1))
        self._buffers[name] = []
        self._buffered[name] = 0

    def close(self) -> None:
        """Flush everything; every table gets a file, empty or not, so every view has a schema."""
        for name in self.tables:
            self._flush(name)
            self._writers[name].close()


def new_run_id() -> str:
    """A UTC start time to the microsecond, then a random suffix: ids sort in start order,
    even for runs that start within one second (a replay's two arms, a test's reruns)."""
    now = datetime.now(UTC)
    return f"{now:%Y%m%dT%H%M%S}.{now:%f}Z-{os.urandom(3).hex()}"


def crash_point(name: str) -> None:
    """Where the atomicity tests kill the process (CENSUS_KILL_AT=name); a no-op otherwise."""
    if os.environ.get("CENSUS_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def publish(out: Out, staging: Path, run_id: str, table_names: list[str]) -> None:
    """Move a staged run's partitions into tables/, `runs` last (the commit point)."""
    crash_point("staged")
    ordered = [n for n in table_names if n != RUNS.name] + [RUNS.name]
    for number, name in enumerate(ordered):
        source = staging / name
        if not source.is_dir():
            continue
        if name == RUNS.name:
            crash_point("before-commit")
        target = out.tables / name / f"{PARTITION}={run_id}"
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        if number == 2:
            crash_point("partly-published")
    crash_point("committed")
    shutil.rmtree(staging, ignore_errors=True)


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
    import pyarrow.parquet as pq

    path = out.statcache(shard)
    if not path.exists():
        return {}
    try:
        table = pq.read_table(path).to_pydict()
    except Exception:  # A damaged cache only costs a re-read; never fail the run for it.
        return {}
    return dict(
        zip(table["key"], zip(table["signature"], table["snapshot_id"], strict=True), strict=True)
    )
