"""The errors a user can act on, defined in one place: the CLI prints any of them as one
line on stderr and exits 2. Kept free of heavy imports so every module, and `census detect`,
can raise them cheaply. An OS-level failure (a full disk, a permission) is one too, through
system_failure."""

from __future__ import annotations

import errno
from typing import NamedTuple


def one_line(text: str) -> str:
    """`text` with its line breaks and other control characters escaped (`\\n`): an error is
    one line on stderr even when it names a path or a label holding one."""
    import unicodedata

    def shown(char: str) -> str:
        breaks = char != "\t" and unicodedata.category(char) in ("Cc", "Zl", "Zp")
        return char.encode("unicode_escape").decode("ascii") if breaks else char

    return "".join(map(shown, text))


class CensusError(Exception):
    """Something the user can fix: the message says what, where, and what to do."""


class RootError(CensusError):
    """A root that cannot be crawled at all."""


class OutError(CensusError):
    """OUT cannot be used (locked, not a census output, unwritable, damaged)."""


class RuleFileError(CensusError):
    """A rule file whose header is not what the rules loader needs."""


class SelectorError(CensusError):
    """A run, census point or label selector that matches nothing in OUT."""


class UnusableInput(CensusError):
    """`census detect` was given something that is not a session folder."""


class UsageError(CensusError):
    """Options that do not fit together or name nothing (a metric, a prune, a query)."""


class SystemFailure(CensusError):
    """The machine refused: a full disk, a permission, a read-only OUT, too many open files."""


# Errnos by the text Python, pyarrow and DuckDB put in their messages (DuckDB gives no errno).
_ERRNO_TEXT = {
    "No space left on device": errno.ENOSPC,
    "Disk quota exceeded": errno.EDQUOT,
    "Permission denied": errno.EACCES,
    "Operation not permitted": errno.EPERM,
    "Read-only file system": errno.EROFS,
    "Too many open files in system": errno.ENFILE,
    "Too many open files": errno.EMFILE,
    "No such file or directory": errno.ENOENT,
    "Input/output error": errno.EIO,
}
_ENOSPC = {errno.ENOSPC, errno.EDQUOT}
_EACCES = {errno.EACCES, errno.EPERM}
_EROFS = {errno.EROFS}
_EMFILE = {errno.EMFILE, errno.ENFILE}


def _errno_of(err: BaseException) -> int | None:
    number = getattr(err, "errno", None)
    if isinstance(number, int) and number > 0:
        return number
    text = str(err)
    for words, value in _ERRNO_TEXT.items():
        if words in text:
            return value
    return None


def _path_of(err: BaseException) -> str | None:
    """The path the failure names: the OSError's filename, else a quoted path in its text."""
    import re

    filename = getattr(err, "filename", None)
    if filename is not None:
        return str(filename)
    found = re.search(r"""["']((?:/|[A-Za-z]:[\\/])[^"']*)["']""", str(err))
    return found.group(1) if found else None


class Trouble(NamedTuple):
    """An OS-level failure in words: what happened, what to do, and where else to turn."""

    problem: str
    remedy: str
    elsewhere: str | None = None


def os_trouble(err: BaseException, fallback: str | None = None) -> Trouble | None:
    """What went wrong and what to do, for an OS-level failure from Python, pyarrow or DuckDB;
    None when `err` is not one. `fallback` is the path to name when the error names none (OUT,
    for a command that writes there)."""
    if isinstance(err, CensusError):
        return None
    from_duckdb = type(err).__module__.lstrip("_").startswith("duckdb")
    number = _errno_of(err) if isinstance(err, OSError) or from_duckdb else None
    if number is None:
        return None
    path = _path_of(err) or fallback or "the file being written"
    if number in _ENOSPC:
        return Trouble(
            f"no space left on the device holding {path}",
            "free space there",
            "or give --out on a disk with room",
        )
    if number in _EACCES:
        return Trouble(
            f"permission denied on {path}", "give this user access to it", "or use another --out"
        )
    if number in _EROFS:
        return Trouble(f"{path} is on a read-only file system", "give an --out on a writable disk")
    if number in _EMFILE:
        return Trouble(
            f"too many open files, opening {path}",
            "raise the limit (ulimit -n 4096) or lower --workers",
        )
    what = getattr(err, "strerror", None) or str(err).splitlines()[0]
    return Trouble(f"{what}: {path}", "check the disk", "--debug shows where census was")


def system_failure(err: BaseException, fallback: str | None = None) -> SystemFailure | None:
    """The one-line error for an OS-level failure (see os_trouble), or None."""
    found = os_trouble(err, fallback)
    if found is None:
        return None
    elsewhere = found.elsewhere
    path = _path_of(err)
    outside = fallback is None or (path is not None and not _inside(path, fallback))
    if elsewhere and "--out" in elsewhere and outside:
        # A file the user named outside OUT (detect --sarif, sql --output): another OUT is
        # no remedy.
        elsewhere = "or give another path"
    remedy = f"{found.remedy} ({elsewhere})" if elsewhere else found.remedy
    return SystemFailure(f"{found.problem}; {remedy}, and run the command again")


def _inside(path: str, folder: str) -> bool:
    import os

    folder, path = os.path.realpath(folder), os.path.realpath(path)
    return path == folder or path.startswith(folder + os.sep)


def damaged_table(err: BaseException, out: str) -> str | None:
    """The failure's first line when DuckDB (or a read) failed on one of OUT's own table files
    (cut short, garbled, or gone from under the manifest), else None: damage to OUT, neither
    a bug of the census nor the fault of a query that reads the table."""
    import os

    from_duckdb = type(err).__module__.split(".")[0] in ("duckdb", "_duckdb")
    text = str(err)
    if not (from_duckdb or isinstance(err, FileNotFoundError)):
        return None
    first = text.splitlines()[0] if text else "no detail"
    if from_duckdb and type(err).__name__ == "Error":
        # DuckDB's bare Error is what its Parquet reader raises on metadata it cannot decode
        # ("Out of buffer", "don't know what type"), naming no file; census's own queries
        # fail with a Binder, Catalog or Conversion error instead.
        return first
    tables = os.path.join(os.path.abspath(out), "tables") + os.sep
    named = str(getattr(err, "filename", None) or text)
    if tables not in named and os.path.realpath(tables[:-1]) + os.sep not in named:
        return None
    return first


def swept_file(err: BaseException, out: str) -> bool:
    """Whether the failure names a table file of OUT that is gone and that OUT no longer lists:
    a compaction or prune committed while the command read OUT and swept the files it had
    listed. OUT is whole then (its rows are in the new files), not damaged."""
    import re
    from pathlib import Path

    from pipeline.store import Out

    found = re.search(
        r"(?:Failed to open local file '|No files found that match the pattern \")([^'\"]+)",
        str(err),
    )
    if found is None:
        return False
    where, path = Out(out), Path(found.group(1))
    tables = where.tables
    if not path.is_relative_to(tables) or path.exists():
        return False
    try:
        listed = {rel for files in where.manifest().values() for rel in files}
    except Exception:  # no readable manifest: not a sweep census can tell
        return False
    return str(path.relative_to(tables)) not in listed


# What a command that lost its files to a concurrent compaction or prune says.
SWEPT = (
    "OUT changed while this command read it: a compaction or prune committed meanwhile and "
    "removed the files it was reading (OUT is whole); run the command again"
)


def damaged_out(detail: str) -> str:
    """The one line for an OUT whose own table file cannot be read (cut short, or gone)."""
    return (
        f"OUT is damaged: a table file cannot be read ({detail[:200]}); restore OUT from a "
        "copy, or crawl into a new --out"
    )
