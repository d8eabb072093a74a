"""The Tree every source offers, and the plain-directory source.

A tree lists entries by path relative to its root (POSIX separators) and
reads a file's bytes; it never writes and never leaves the root.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace

from pipeline.parse.lexical import MAX_FILE_BYTES, is_markdown


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    is_dir: bool
    size: int
    mtime_ns: int
    # Why the entry cannot be read (a link out of the root, a special file); None when fine.
    problem: str | None = None
    # The inode's change time, which moves with every write and which no tool sets back (an
    # edit of the same size with its mtime restored by `touch -r` or `rsync -a` moves it); 0
    # where there is none (an archive's member).
    ctime_ns: int = 0
    # A file reached through a symbolic link inside the root (read, but git reads some such
    # files, a .gitignore, as if they were not there).
    link: bool = False

    @property
    def stamp(self) -> str:
        """Its metadata as the crawl's caches compare it: size, mtime and ctime."""
        return f"{self.size}\0{self.mtime_ns}\0{self.ctime_ns}"


class ReadError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Tree:
    """A crawl root: the base class lists nothing; subclasses fill in."""

    label: str
    # The archive's file name, part of repository identity; '' for directories.
    archive_name: str = ""
    is_directory: bool = False
    # The root file's own size and time (an archive): its members' metadata may not change
    # when it is replaced (a script writes every member with time 0), so this enters every
    # repository's signature; '' for directories, whose files' own metadata say it.
    stamp: str = ""
    # Why the root could be read only in part (an archive cut short or past its size limit).
    incomplete: str | None = None

    def __init__(self, label: str) -> None:
        self.label = label
        # Problems with the root itself: (path, code, message).
        self.issues: list[tuple[str, str, str]] = []

    def blocks(self) -> Iterator[list[Entry]]:
        """Entries in groups that hold whole repositories (a repository never spans two)."""
        raise NotImplementedError

    def read(self, path: str) -> bytes:
        raise NotImplementedError


BAD_NAME = "name is not valid UTF-8 (shown with U+FFFD); not read"
OUT_OF_ROOT = "symbolic link leads out of the root; not followed"
# The problem of a link to a folder inside the root that is no session folder.
DIR_LINK = "symbolic link to a directory; not followed"
# The problem of a link that leads nowhere (or round in a loop).
BROKEN_LINK = "broken or looping symbolic link"
# The problem of a folder the walk could not list: what it holds is unknown.
UNLISTED = "cannot list directory"
# The problem of a folder listed in its parent, then deleted before it was listed itself.
FOLDER_VANISHED = f"{UNLISTED}: it vanished during the crawl"
# The problem of a file listed, then deleted before it was read (a crawl racing an edit).
VANISHED = "file vanished during the crawl"


def _stands_for_sessions(path: str) -> bool:
    """Whether a path is where a session folder, or a folder of the layout above sessions,
    would be (a Markdown file named like a session folder is an index's link, not one)."""
    meant = is_session_path(path) and not is_markdown(path)
    return meant or path.endswith(_LAYOUT_TAILS) or path in _LAYOUT


def is_unlisted(entry: Entry) -> bool:
    """A folder the walk could not list (its entry yielded again with the problem), or one it
    does not enter because its name is not UTF-8: what either holds is unknown."""
    return entry.is_dir and (
        (entry.problem or "").startswith(UNLISTED) or entry.problem == BAD_NAME
    )


def _listed_as_dir(item: os.DirEntry[str]) -> bool:
    """Whether the listing says an entry is a folder (its type, without a stat of its own)."""
    try:
        return item.is_dir(follow_symlinks=False)
    except OSError:
        return False


def storable_name(name: str) -> str:
    """`name` when it is valid UTF-8; else its bytes decoded with U+FFFD for what is not.

    Names from the file system (or a tar) carry undecodable bytes as lone surrogates, which
    no Parquet string can hold.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return name


def _real_dir(path: str) -> bool:
    """A directory that is not a symbolic link (those are never followed)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


# The folders of the session layout (spec §2) above the session folders themselves.
_LAYOUT = ("docs", "docs/research", "docs/history", "docs/history/brainstorms")
BROKEN_FOLDER_LINK = (
    "broken or looping symbolic link where a session folder (or a folder of the layout) would "
    "be; no session it leads to is read"
)
_LAYOUT_TAILS = tuple("/" + folder for folder in _LAYOUT)
LAYOUT_LINK = (
    "symbolic link to a folder of the session layout; not followed, so the sessions under it "
    "are not read (census detect reads one through the link)"
)


MISNAMED_FOLDER = (
    "named like a session folder but for its case, spaces or spelling (spec §2: "
    "`{topic}-brainstorm` under `docs/research/`, or a folder under `docs/history/brainstorms/`); "
    "the crawl does not read it as a session"
)


def misnamed(name: str, path: str) -> bool:
    """Whether a folder is a session folder misnamed (imported here: discovery reads this
    module's Entry); only names near the layout's are checked, so the walk stays cheap."""
    from pipeline.discover import misnamed_session

    near = "brainstorm" in name.casefold() or "/brainstorm" in path.casefold()
    return near and misnamed_session(path.split("/"))


# A file where a research session folder would be: a folder link git checked out as a file
# holding its target (core.symlinks off), or a folder replaced by a file.
FILE_AS_SESSION = (
    "a file where a session folder would be (a folder link checked out as a file?); "
    "no session is read"
)


def is_file_as_session(path: str) -> bool:
    """Whether a file's path names a research session folder (`docs/research/x-brainstorm`);
    a file beside the history folders (an index, `README.md`) is no session meant."""
    from pipeline.discover import innermost_session

    found = innermost_session(path.split("/"))
    return found is not None and found[3] == "research"


def is_session_path(path: str) -> bool:
    """Whether a path (relative, POSIX) is a session folder itself (spec §2), as discovery
    matches one (imported here: discovery reads this module's Entry)."""
    from pipeline.discover import innermost_session

    return innermost_session(path.split("/")) is not None


def is_folder_entry(entry: os.DirEntry[str]) -> bool:
    """Whether an entry is a folder, through a link; a link that loops is none (DirEntry
    raises there, and that would end the look at its siblings)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def is_repo_root(path: str) -> bool:
    """A directory that holds docs/research/*-brainstorm or docs/history/brainstorms/*."""
    docs = os.path.join(path, "docs")
    if not _real_dir(docs):
        return False
    research = os.path.join(docs, "research")
    history = os.path.join(docs, "history", "brainstorms")
    if not _real_dir(research):
        research = ""
    if not (_real_dir(os.path.join(docs, "history")) and _real_dir(history)):
        history = ""
    try:
        if research:
            with os.scandir(research) as it:
                # A session folder that is a link counts too (the walk follows it).
                if any(e.name.endswith("-brainstorm") and is_folder_entry(e) for e in it):
                    return True
        if history:
            with os.scandir(history) as it:
                return any(is_folder_entry(e) for e in it)
    except OSError:
        pass
    return False


class DirTree(Tree):
    is_directory = True

    def __init__(self, root: str, skip: str | None = None, bound: str | None = None) -> None:
        super().__init__(root)
        self.root = os.path.realpath(root)
        # Where a symbolic link may lead: the root, or a folder around it (detect walks one
        # session folder, but its repository is the root a crawl would have).
        self.bound = os.path.realpath(bound) if bound is not None else self.root
        # OUT, when it lies inside the root: the crawl never reads what it writes (else each
        # night's new files would make every repository look changed).
        inside = skip is not None and os.path.realpath(skip).startswith(self.root + os.sep)
        self.skip = os.path.realpath(skip) if skip is not None and inside else None
        # OUT wherever it lies: a link to it (census-out -> /big/disk/out) is OUT, not a
        # folder of the corpus that leads out of the root.
        self.out = os.path.realpath(skip) if skip is not None else None
        # Folders holding a `.git` that repo_roots passed through, no repository root by
        # their session folders (none now): --git-history asks whether their history held one.
        self.git_folders: list[str] = []

    def blocks(self) -> Iterator[list[Entry]]:
        for rel in self.repo_roots():
            yield list(self.walk_block(rel))

    def repo_roots(self) -> Iterator[str]:
        """Folders (relative to the root) that are repository roots, each listed whole later.

        Only the folders above repositories are scanned here; the crawl's workers walk each
        repository's subtree themselves, so that the walk runs in parallel too.
        """
        stack = [""]
        while stack:
            rel = stack.pop()
            full = os.path.join(self.root, rel) if rel else self.root
            if is_repo_root(full):
                yield rel
                continue
            # Depth-first, in name order, so that the listing and the jobs are deterministic.
            scanned = self._scan(rel)
            if any(e.problem == "git" for e in scanned):
                self.git_folders.append(rel)
            # A name not UTF-8 is noted by the scan already.
            for entry in (e for e in scanned if is_unlisted(e) and e.problem != BAD_NAME):
                # Repositories under it would vanish without a word (inside one, its session's
                # or repository's issue says so: discover).
                self.issues.append((entry.path, "unreadable-dir", str(entry.problem)))
            children = [e.path for e in scanned if e.is_dir and e.problem is None]
            stack.extend(reversed(children))

    def _scan(self, rel: str) -> list[Entry]:
        full = os.path.join(self.root, rel) if rel else self.root
        try:
            with os.scandir(full) as it:
                raw = sorted(it, key=lambda e: e.name)
        except FileNotFoundError:
            self.issues.append((rel or ".", "unreadable-dir", FOLDER_VANISHED))
            return []
        except OSError as err:
            self.issues.append((rel or ".", "unreadable-dir", f"{UNLISTED}: {err.strerror}"))
            return []
        entries = []
        for item in raw:
            path = f"{rel}/{item.name}" if rel else item.name
            if self.skip is not None and os.path.join(full, item.name) == self.skip:
                continue
            if item.name == ".git":
                entries.append(Entry(path, True, 0, 0, "git"))
                continue
            shown = storable_name(item.name)
            if shown != item.name:
                # Not UTF-8: the name cannot be stored as it is, and the replaced one does not
                # open the file. Listed under the replaced name, never read or descended.
                entry = self._entry(item, f"{rel}/{shown}" if rel else shown)
                entry = replace(entry, problem=BAD_NAME)
                if entry.is_dir:
                    self.issues.append((entry.path, "unreadable", BAD_NAME))
                entries.append(entry)
                continue
            entry = self._entry(item, path)
            if not entry.is_dir and entry.problem is None and is_file_as_session(path):
                self.issues.append((path, "not-a-folder", FILE_AS_SESSION))
            # A folder link too: one misnamed is a session folder meant, left unread unsaid.
            if entry.is_dir and entry.problem in (None, DIR_LINK) and misnamed(item.name, path):
                self.issues.append((path, "misnamed-folder", MISNAMED_FOLDER))
            entries.append(entry)
        return entries

    def _entry(self, item: os.DirEntry[str], path: str) -> Entry:
        try:
            st = item.stat(follow_symlinks=False)
            if item.is_symlink():
                return self._link(item, path)
            if stat.S_ISDIR(st.st_mode):
                return Entry(path, True, 0, st.st_mtime_ns, ctime_ns=st.st_ctime_ns)
            if stat.S_ISREG(st.st_mode):
                return Entry(path, False, st.st_size, st.st_mtime_ns, ctime_ns=st.st_ctime_ns)
            return Entry(path, False, 0, 0, "not a regular file")
        except FileNotFoundError:
            # Deleted between the listing and this stat: a file is noted as its read would
            # note it; a folder is entered and found gone, as one deleted a moment later is.
            if item.is_dir(follow_symlinks=False):
                return Entry(path, True, 0, 0)
            return Entry(path, False, 0, 0, VANISHED)
        except OSError as err:
            if _listed_as_dir(item):
                # A folder whose path is too long, or whose parent lets it be listed but not
                # entered: what it holds is unknown, as for a folder that cannot be listed.
                return Entry(path, True, 0, 0, f"{UNLISTED}: {err.strerror}")
            return Entry(path, False, 0, 0, f"cannot stat: {err.strerror}")

    def _link(self, item: os.DirEntry[str], path: str) -> Entry:
        target = os.path.realpath(item.path)
        if target != self.bound and not target.startswith(self.bound + os.sep):
            nowhere = not os.path.lexists(target)
            if target != self.out and (
                os.path.isdir(target) or (nowhere and _stands_for_sessions(path))
            ):
                # A folder out of the root (a session, a docs/), or a session folder linked
                # out of it to nothing (an unmounted share), would vanish without a word;
                # inside a session, the session's own parse issue names it (see crawl).
                self.issues.append((path, "unreadable", OUT_OF_ROOT))
            return Entry(path, False, 0, 0, OUT_OF_ROOT)
        try:
            st = os.stat(target)
        except OSError:
            if _stands_for_sessions(path):
                # A session folder (or one above it) linked to nothing: it would vanish unsaid.
                self.issues.append((path, "unreadable", BROKEN_FOLDER_LINK))
            return Entry(path, False, 0, 0, BROKEN_LINK)
        if stat.S_ISDIR(st.st_mode):
            # Directory links are not followed: their content is reachable by its real path.
            # One that points back at an enclosing folder is a loop, and is noted.
            here = os.path.realpath(os.path.dirname(item.path))
            if here == target or here.startswith(target + os.sep):
                message = "symbolic link loops back to an enclosing folder; not followed"
                self.issues.append((path, "unreadable", message))
            elif is_session_path(path):
                # A session folder that is a link (inside the root) is that session: found by
                # its path (spec §2), read through the link, as `census detect` reads it.
                return Entry(path, True, 0, st.st_mtime_ns, ctime_ns=st.st_ctime_ns)
            elif path.endswith(_LAYOUT_TAILS) or path in _LAYOUT:
                # Its sessions' real paths are no session paths, so they would vanish unsaid.
                self.issues.append((path, "unreadable", LAYOUT_LINK))
            return Entry(path, True, 0, 0, DIR_LINK)
        if not stat.S_ISREG(st.st_mode):
            # A link to a FIFO or a device: opening it could block forever.
            return Entry(path, False, 0, 0, "symbolic link to a special file; not read")
        return Entry(path, False, st.st_size, st.st_mtime_ns, ctime_ns=st.st_ctime_ns, link=True)

    def walk(self) -> Iterator[Entry]:
        """Every entry below the root (the root itself first, with path '')."""
        return self._walk("")

    def walk_block(self, rel: str) -> Iterator[Entry]:
        """Every entry below `rel` (itself first), paths relative to the root."""
        return self._walk(rel)

    def _walk(self, rel: str) -> Iterator[Entry]:
        full = os.path.join(self.root, rel) if rel else self.root
        try:
            st = os.stat(full)
            mtime, ctime = st.st_mtime_ns, st.st_ctime_ns
        except OSError:
            mtime = ctime = 0
        yield Entry(rel, True, 0, mtime, ctime_ns=ctime)
        stack = [rel]
        while stack:
            current = stack.pop()
            failed = len(self.issues)
            children = self._scan(current)
            unlisted = [i for i in self.issues[failed:] if i[1] == "unreadable-dir"]
            if unlisted and current != rel:
                # The folder again, now with its problem: what it holds is unknown, and the
                # session (or repository) it is part of says so (gather, discover).
                yield Entry(current, True, 0, 0, unlisted[0][2])
            yield from children
            stack.extend(e.path for e in reversed(children) if e.is_dir and e.problem is None)

    def read(self, path: str) -> bytes:
        return read_file(os.path.join(self.root, path), self.bound)


def read_file(full: str, bound: str | None = None) -> bytes:
    """A file's bytes. With `bound` (a real path), a file that is a symbolic link is read only
    when it leads inside it: the walk checked each link it listed, but a file swapped for a
    link after the listing would otherwise be read wherever it led."""
    try:
        fd = _open(full, bound)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise ReadError("not-a-file", "expected a file, found a directory")
            if not stat.S_ISREG(st.st_mode):
                raise ReadError("unreadable", "not a regular file; not read")
            size = st.st_size
            if size > MAX_FILE_BYTES:
                raise ReadError(
                    "too-large", f"file is {size} bytes, over the 8 MiB limit; not read"
                )
            # Raw os.read on the descriptor (no file object: the crawl reads many small files),
            # sized by the file plus one byte, so a file that grows while read is still capped.
            chunks = [os.read(fd, size + 1)]
            while len(chunks[-1]) and sum(map(len, chunks)) <= size:
                chunks.append(os.read(fd, size + 1))
            data = b"".join(chunks)
            if len(data) > MAX_FILE_BYTES:
                raise ReadError("too-large", "file grew past the 8 MiB limit while read; not read")
            return data
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise ReadError("vanished", VANISHED) from None
    except IsADirectoryError:
        raise ReadError("not-a-file", "expected a file, found a directory") from None
    except OSError as err:
        raise ReadError("unreadable", f"cannot read: {err.strerror}") from None


# O_NONBLOCK: a FIFO swapped in after the listing must not block the open; it is refused after
# it. For regular files the flag changes nothing.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _open(full: str, bound: str | None) -> int:
    if bound is None or not _NO_FOLLOW:
        return os.open(full, _READ_FLAGS)
    try:
        return os.open(full, _READ_FLAGS | _NO_FOLLOW)
    except OSError as err:
        if err.errno != errno.ELOOP:
            raise
    target = os.path.realpath(full)
    if target != bound and not target.startswith(bound + os.sep):
        raise ReadError("unreadable", OUT_OF_ROOT)
    return os.open(target, _READ_FLAGS | _NO_FOLLOW)
