"""What a writer does after its commit, and keeping OUT/census.duckdb in step with OUT.

Once manifest.json is replaced, the run (or check) is in OUT: a failure in a step after it
(the crawl caches, compaction, census.duckdb) must not make the command fail, or the exit
code would say the run was lost when it was not. Each such step that fails becomes part of
one warning line that says what the next command does about it.

census.duckdb is a convenience for `duckdb OUT/census.duckdb`; the commands themselves read
the tables. It records which manifest it was built from and its digest
(OUT/state/database.json), so any command that reads OUT can tell that it is missing, stale or
altered (a view replaced in the DuckDB CLI) and rebuild it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.errors import CensusError, os_trouble
from pipeline.store import DATABASE_STATE, Lock, Out, read_state, write_state


@dataclass
class Step:
    what: str  # what the step writes, as the warning names it
    then: str  # what happens if it is not written
    action: Callable[[], object]


def after_commit(out: Out, subject: str, *steps: Step, sweep: bool = False) -> list[str]:
    """Run the steps that follow a commit (then compaction and census.duckdb); the warning
    line for those that failed (an empty list when all went through). Call under the commit
    lock; `sweep` only under the writers' lock held exclusive.

    With `sweep`, once census.duckdb names the committed files, the files the commit
    superseded (the last check's lifetime_forks, a compaction's inputs) are deleted: a
    Parquet reader of tables/ read them beside their replacements until the next writer."""
    from pipeline.maintain import auto_compact

    compaction = Step("compaction", "the next commit compacts", lambda: auto_compact(out))
    every = [*steps, compaction, database_step(out)]
    failed: list[tuple[Step, BaseException]] = []
    for step in every:
        try:
            step.action()
        except Exception as err:  # the commit stands whatever a later step does
            failed.append((step, err))
    if not failed:
        if sweep:
            out.sweep()
        return []
    problem, todo = _describe(failed[0][1], str(out.root))
    whats = ", ".join(step.what for step, _ in failed)
    thens = "; ".join(step.then for step, _ in failed)
    return [
        f"warning: {subject} is committed, but {whats} could not be written ({problem}); "
        f"{todo}; {thens}"
    ]


def _describe(err: BaseException, fallback: str) -> tuple[str, str]:
    found = os_trouble(err, fallback)
    if found is not None:
        # The run is already in this OUT: another --out (found.elsewhere) is no remedy.
        return found.problem, found.remedy
    first = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__}: {first}", "rerun as census --debug … to see where"


def cache_step(out: Out, cache: dict[str, tuple[str, str]], shard: str) -> Step:
    from pipeline.store import write_statcache

    return Step(
        "the file-metadata cache",
        "the next crawl reads every session again",
        lambda: write_statcache(out, cache, shard),
    )


def state_step(out: Out, name: str, data: dict[str, Any]) -> Step:
    return Step(
        "the git-history state",
        "the next crawl walks the history again",
        lambda: write_state(out, name, data),
    )


def database_step(out: Out) -> Step:
    return Step(
        "OUT/census.duckdb",
        "the next census command that reads OUT rebuilds census.duckdb",
        lambda: refresh_database(out),
    )


def fingerprint(out: Out) -> str:
    """What census.duckdb's views were built over: the committed files and the views' SQL."""
    from pipeline.engine import stamp

    return stamp(out)


def is_fresh(out: Out) -> bool:
    from pipeline.engine import as_written

    known = read_state(out, DATABASE_STATE).get("manifest")
    return out.database.is_file() and known == fingerprint(out) and as_written(out)


def refresh_database(out: Out) -> None:
    """Write census.duckdb over OUT's committed files and record which manifest it shows.

    A lock of its own keeps two commands from writing it at once; a failed write leaves the
    previous census.duckdb in place and removes its temporary files, which may be large.
    """
    from pipeline.engine import database_digest, write_database

    with Lock(out.root / ".database-lock", wait=True):
        listed = fingerprint(out)
        try:
            write_database(out)
        except BaseException:
            _remove_leftovers(out)
            raise
        digest = database_digest(out)
        write_state(out, DATABASE_STATE, {"manifest": listed, "sha256": digest})


def _remove_leftovers(out: Out) -> None:
    temp = out.database.with_name("census.duckdb.tmp")
    for leftover in (temp, temp.with_name(temp.name + ".wal")):
        with contextlib.suppress(OSError):  # best effort: the failure itself is what to report
            leftover.unlink(missing_ok=True)


def ensure_database(out_path: str) -> str | None:
    """Rebuild a missing or stale census.duckdb (after a failed step, a prune, a compaction);
    a warning line when it cannot be rebuilt, None otherwise."""
    out = Out(out_path)
    if not out.exists():
        return None
    try:
        if is_fresh(out):
            return None
        refresh_database(out)
    except CensusError:
        return None  # a damaged OUT: the command itself says so
    except Exception as err:
        problem, todo = _describe(err, str(out.root))
        return (
            f"warning: {out.database} is out of date and could not be rebuilt ({problem}); "
            f"{todo}; census commands read the tables themselves, only `duckdb "
            "census.duckdb` sees the old views"
        )
    return None
