"""What the last full walk of a block saw, so that an unchanged rerun confirms it by stat alone.

A block is one repository root under a directory root, as the crawl's workers walk it. Its
memo holds a stamp (kind, size, mtime, ctime) of every folder and file the walk listed, of git's own
files that decide what the crawl reads from git (HEAD, refs, index, config) for every `.git` in
or above it, and the observation rows the block gave. A rerun stats each stamped path: all equal
means the same listing (a folder's mtime moves when an entry is added, removed or renamed in
it), the same file metadata (the promise the stat cache already makes per session) and the same
git state, so the same rows follow without walking, hashing or discovering again. Anything
else, or anything the walk could not take at face value, walks the block as before.

The stats are a rerun's whole cost, so they run in worker processes (`confirm`), and the
stamps and the rows are packed apart: workers unpack only stamps, the parent only rows.
"""

from __future__ import annotations

import marshal
import os
import stat
import zlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the workers that confirm stamps import this module alone
    from pipeline.sources.tree import Entry

# Bump when a memo's layout or meaning changes: an older file is then ignored.
MEMO_FORMAT = 5
DIR = -1  # the size stamped for a folder
ABSENT = -2  # the size stamped for a path that must stay missing (a .git not there, no index)
# A file changed within this long of the walk may change again within the same mtime tick
# unseen (git calls these "racily clean"); such a block is walked again next time. (A ctime
# moves with any later change, so an mtime set back is caught by the ctime stamp.)
RACY_NS = 2_000_000_000
# Git's files whose change can change what the crawl reads from git (tracked files, origin,
# HEAD). Updates go through a lock file renamed over them, which also moves `.git`'s mtime.
GIT_FILES = ("HEAD", "config", "index", "packed-refs")
# Where git reads configuration beyond the repository's own (remote.origin.url could be set
# there); their stamps are part of every memo's context.
GIT_CONFIG_ENV = ("HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM")

# (path relative to the root, size or DIR/ABSENT, mtime_ns, ctime_ns): the ctime moves with
# an edit whose mtime was set back, which the stat cache's signatures hold too.
Stamp = tuple[str, int, int, int]
# One block's stamps and its observation rows, each marshalled and compressed: the parent
# loads, hands on and saves a night's memos as opaque bytes (paths repeat their folders, and
# compress well).
Memo = tuple[bytes, bytes]


def pack(stamps: list[Stamp], rows: list[list[Any]]) -> Memo:
    return zlib.compress(marshal.dumps(stamps), 1), zlib.compress(marshal.dumps(rows), 1)


def unpack_rows(memo: Memo, width: int) -> list[list[Any]] | None:
    """The rows of `width` columns, or None when the memo does not hold that."""
    rows = _loads(memo[1])
    shapes_hold = isinstance(rows, list) and all(
        isinstance(row, list) and len(row) == width for row in rows
    )
    return rows if shapes_hold else None


def _loads(packed: bytes) -> Any:
    try:
        return marshal.loads(zlib.decompress(packed))
    except (zlib.error, EOFError, ValueError, TypeError):
        return None


def context(reader: str, git_history: bool, shard: str) -> list[Any]:
    """What every memo was made under: a memo is only reused under the same."""
    env = [os.environ.get(name, "") for name in GIT_CONFIG_ENV]
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = [
        os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
    ]
    return [MEMO_FORMAT, reader, git_history, shard, env, [_stamp_file(p) for p in configs]]


def load(path: str, expected: list[Any]) -> tuple[dict[str, Memo], list[str]]:
    """The memos saved under the same context, and the snapshot files OUT listed when they
    were saved; nothing when missing, damaged or made otherwise."""
    try:
        with open(path, "rb") as handle:
            made, files, memos = marshal.load(handle)
    except (OSError, EOFError, ValueError, TypeError):
        return {}, []
    if made != expected or not isinstance(memos, dict) or not isinstance(files, list):
        return {}, []
    kept = {k: m for k, m in memos.items() if isinstance(k, str) and _is_memo(m)}
    return kept, [f for f in files if isinstance(f, str)]


def _is_memo(memo: object) -> bool:
    return isinstance(memo, tuple) and len(memo) == 2 and all(isinstance(b, bytes) for b in memo)


def save(path: str, made: list[Any], memos: dict[str, Memo], snapshot_files: list[str]) -> None:
    """`snapshot_files`: the snapshots table's committed files, which hold every snapshot the
    rows name; while they all stay committed, the rows need no look-up in OUT."""
    temp = f"{path}.tmp"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(temp, "wb") as handle:
        marshal.dump((made, snapshot_files, memos), handle)
    os.replace(temp, path)


def forget(path: str, drop: Callable[[str], bool]) -> None:
    """Remove the memos of the blocks `drop` names, so that the next crawl walks them; a
    missing or damaged file holds none a crawl would use, and is left as it is."""
    try:
        with open(path, "rb") as handle:
            made, files, memos = marshal.load(handle)
    except (OSError, EOFError, ValueError, TypeError):
        return
    if isinstance(memos, dict):
        save(path, made, {k: m for k, m in memos.items() if not drop(k)}, files)


def confirm(blocks: list[tuple[str, Memo]]) -> list[bool]:
    """Whether each (root, memo)'s stamps still hold: the work a rerun's workers share."""
    return [holds(root, _loads(memo[0])) for root, memo in blocks]


def holds(root: str, stamps: list[Stamp] | None) -> bool:
    """Whether every stamped path still stats as stamped (the rerun's whole cost when it does).
    A stamp of another shape (a damaged memo) never holds."""
    if not isinstance(stamps, list):
        return False
    try:
        return _holds(root, stamps)
    except (TypeError, ValueError):
        return False


def _holds(root: str, stamps: list[Stamp]) -> bool:
    lstat, is_dir, is_reg = os.lstat, stat.S_ISDIR, stat.S_ISREG
    for path, size, mtime, ctime in stamps:
        try:
            st = lstat(f"{root}/{path}" if path else root)
        except FileNotFoundError:
            if size == ABSENT:
                continue
            return False
        except OSError:
            return False
        if size == DIR:
            if not is_dir(st.st_mode) or st.st_mtime_ns != mtime or st.st_ctime_ns != ctime:
                return False
        elif (
            not is_reg(st.st_mode)
            or st.st_size != size
            or st.st_mtime_ns != mtime
            or st.st_ctime_ns != ctime
        ):
            return False  # an ABSENT stamp never equals a size, so a path now there fails
    return True


def stamps_of(root: str, rel: str, entries: Iterable[Entry], started_ns: int) -> list[Stamp] | None:
    """The stamps of a walked block (its entries, and git's files in and above it), or None
    when the walk saw something a stat cannot vouch for: a link, a special or unreadable
    entry, a name it had to replace, a `.git` that is not a folder, a racily new mtime.
    Take them right after the walk and before git is asked anything: what changes later
    then differs from its stamp."""
    stamps: list[Stamp] = []
    for entry in entries:
        if entry.problem == "git":
            found = _git_stamps(root, entry.path)
            if found is None:
                return None
            stamps.extend(found)
        elif entry.problem is not None:
            return None
        else:
            size = DIR if entry.is_dir else entry.size
            stamps.append((entry.path, size, entry.mtime_ns, entry.ctime_ns))
    # A .git above the block (inside the root) gives its repositories their identity too.
    parts = rel.split("/") if rel else []
    for depth in range(len(parts) - 1, -1, -1):
        above = "/".join([*parts[:depth], ".git"])
        if os.path.lexists(f"{root}/{above}"):
            found = _git_stamps(root, above)
            if found is None:
                return None
            stamps.extend(found)
        else:
            stamps.append((above, ABSENT, 0, 0))
    racy = started_ns - RACY_NS
    if any(mtime >= racy for _, _, mtime, _ in stamps):
        return None
    return stamps


def _git_stamps(root: str, git: str) -> list[Stamp] | None:
    """`.git` itself, its files that name HEAD, the index and the origin, and every ref."""
    try:
        st = os.lstat(f"{root}/{git}")
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode):
        return None  # a worktree's or submodule's pointer file: its git state lives elsewhere
    paths = [f"{git}/{name}" for name in GIT_FILES]
    failed: list[OSError] = []
    for top, dirs, files in os.walk(f"{root}/{git}/refs", onerror=failed.append):
        rel = top[len(root) + 1 :]
        paths.append(rel)
        paths.extend(f"{rel}/{name}" for name in sorted(files))
        dirs.sort()
    stamps: list[Stamp] = [(git, DIR, st.st_mtime_ns, st.st_ctime_ns)]
    for path in paths:
        try:
            found = os.lstat(f"{root}/{path}")
        except FileNotFoundError:
            stamps.append((path, ABSENT, 0, 0))
            continue
        except OSError:
            return None
        size = DIR if stat.S_ISDIR(found.st_mode) else found.st_size
        stamps.append((path, size, found.st_mtime_ns, found.st_ctime_ns))
    return None if failed else stamps


def _stamp_file(path: str) -> list[int]:
    try:
        st = os.stat(path)
    except OSError:
        return [ABSENT, 0]
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns]
