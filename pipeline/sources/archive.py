"""Archives (.tar, .tar.gz/.tgz, .tar.bz2, .tar.xz, .zip) read in place as trees.

Compressed tars are read in one streaming pass (random access would re-decompress
from the start for every member), and a second only when a link member leads to members
that went by before it; only members a session, a link document or a link could need are
kept in memory. Nothing is ever extracted to disk.
"""

from __future__ import annotations

import contextlib
import lzma
import os
import posixpath
import tarfile
import zipfile
import zlib
from bisect import bisect_left
from collections.abc import Iterator
from functools import cached_property
from typing import Self

from pipeline.parse.lexical import MAX_FILE_BYTES, is_markdown
from pipeline.sources.tree import (
    BAD_NAME,
    FILE_AS_SESSION,
    MISNAMED_FOLDER,
    Entry,
    ReadError,
    Tree,
    is_file_as_session,
    is_session_path,
    misnamed,
    storable_name,
)

ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".zip")
# A decompression bomb: members that expand past EXPANSION_RATIO times the archive's own size
# (text compresses 3-20x; bombs 1000x), or past MAX_ARCHIVE_BYTES, stop the reading there.
MAX_ARCHIVE_BYTES = 4 * 1024**3
EXPANSION_RATIO = 200
MIN_EXPANSION_BYTES = 64 * 1024**2
# What a broken archive raises while read: a bad stream (zlib, lzma; bz2 raises OSError), a
# cut (EOFError), an encrypted zip member (RuntimeError), an unknown zip method
# (NotImplementedError), a bad CRC (BadZipFile).
FAULTS = (
    tarfile.TarError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    OSError,
    EOFError,
    ValueError,
    RuntimeError,
    NotImplementedError,
)
# The problem of a link member (symbolic or hard) that leads out of the archive, to nothing, or
# to a member not kept: not followed, so nothing it names is read.
LINK = "link inside an archive; not followed"
# How many links a chain of links may pass through before it counts as a loop (as the kernel's
# ELOOP limit for a directory root).
MAX_LINK_HOPS = 40
# What a link member standing for sessions means: the members the archive itself holds under
# its name are inside the root and read by their own names (nothing is extracted through it).
# Entries session folder links may add, at most: links could otherwise multiply a small
# archive's members without bound (each link a 512-byte header, each a whole session again).
MIN_ALIASED = 10_000
ALIASED_PER_LISTED = 2
ALIAS_LIMIT = "links in this archive already stand for more entries than it lists; not followed"
LINK_LEADS_NOWHERE = (
    "no session it leads to is read (members the archive holds under its name are read as they are)"
)
# A file member whose name other members hold as their folder.
FILE_AND_FOLDER = (
    "archive holds this name as a file and as the folder of other members; not read "
    "(extraction tools disagree on which it is)"
)
# Folders between a repository and its session folders.
_ABOVE_SESSIONS = ("docs/research", "docs/history", "docs/history/brainstorms")
CUT_SHORT = "cut short"
CORRUPT = "corrupt"
SIZE_LIMIT = "stopped at the size limit"
_ENDS_BEFORE_A_HEADER = ("empty file", "truncated header")
_HEADER_FAULTS = {
    "EmptyHeaderError": CUT_SHORT,
    "TruncatedHeaderError": CUT_SHORT,
    "InvalidHeaderError": CORRUPT,
}


def _wanted(path: str) -> bool:
    """Members a session or a link could need; the rest are listed but not kept."""
    return is_markdown(path) or "/docs/" in f"/{path}"


# The first bytes of a zip (a member, or an empty zip's directory end) and of the streams a
# tar is read from (gzip, bzip2, xz): an archive is read as what it holds, whatever its name.
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_TAR_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")
_MAGIC_BYTES = 512


# A member named with `..` inside it that stays inside the archive: extraction tools disagree
# on where it lands (GNU tar strips up to the `..`, bsdtar refuses it, Python keeps it in place).
INNER_DOT_DOT = (
    "archive member named with `..`; not read (extraction tools disagree on where it lands)"
)


# A member named with an absolute path, or one whose `..` climbs out of the archive.
CLIMBS_OUT = "archive member climbs out of the archive (an absolute name, or `..`); not read"


def _inside(name: str) -> str | None:
    """Where a member named with `..` that stays inside the archive would be after the `..`
    are resolved; None for a name that climbs out or is absolute."""
    name = name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    norm = posixpath.normpath(name)
    return None if norm in (".", "..") or norm.startswith("../") else norm


def _landing(name: str) -> str | None:
    """Where extraction lands a member named with an absolute path or one that climbs out:
    GNU tar strips the leading `/` (bsdtar, unzip and Python's `data` filter too) and every
    part up to the last `..`; None when nothing is left."""
    name = name.replace("\\", "/")
    if len(name) > 1 and name[1] == ":":
        name = name[2:]  # a drive letter, as a zip made on Windows may hold
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        parts = parts[len(parts) - parts[::-1].index("..") :]
    return "/".join(parts) or None


def _safe_name(name: str) -> str | None:
    """The member's path inside the archive, or None when it climbs out or is absolute."""
    name = name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    norm = posixpath.normpath(name)
    if norm == ".." or norm.startswith("../") or "/../" in f"/{name}/":
        return None
    return "" if norm == "." else norm


class _Headers(tarfile.TarInfo):
    """A TarInfo that tells its archive why a header was not read: tarfile ends the listing
    without a word when the stream stops at or inside a header, or a later header is corrupt."""

    @classmethod
    def fromtarfile(cls, archive: tarfile.TarFile) -> Self:
        try:
            return super().fromtarfile(archive)
        except tarfile.HeaderError as err:
            # tarfile's own classes (not in its stubs): none read, part read, a bad checksum.
            why = _HEADER_FAULTS.get(type(err).__name__)
            if why is not None and isinstance(archive, _Reading):
                archive.ended_early = why
            raise


class _Reading(tarfile.TarFile):
    # Why the listing ended early (CUT_SHORT, CORRUPT); None at the end-of-archive block.
    ended_early: str | None = None


class ArchiveTree(Tree):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path
        self.archive_name = posixpath.basename(path.replace("\\", "/"))
        self._data: dict[str, bytes] = {}
        self._entries: dict[str, Entry] = {}
        # Why members may be missing (CUT_SHORT, CORRUPT, SIZE_LIMIT); None when all were listed.
        self.incomplete: str | None = None
        self._last: str | None = None  # the last member met, to say where a fault struck
        # Each link member and the member path it leads to (None when out of the archive).
        self._links: dict[str, str | None] = {}
        # The link members that are symbolic (tar's hard links are files with two names).
        self._symbolic: set[str] = set()
        # Members some link leads to, kept although no session or link document would need them.
        self._targets: set[str] = set()
        self._listed: list[str] = []
        # Files named with `..` that stay inside, by where they would be: refused, never read.
        self._refused: dict[str, Entry] = {}
        # Each tar member's place in the stream (its last copy's), so that a second pass stops
        # at the last member it needs, never past where the first pass stopped (a bomb).
        self._places: dict[str, int] = {}
        with contextlib.suppress(OSError):  # an archive that cannot be opened says so later
            st = os.stat(path)
            self.stamp = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"

    def blocks(self) -> Iterator[list[Entry]]:
        try:
            if self.is_zip:
                self._load_zip()
            else:
                self._load_tar()
        except FAULTS as err:
            cut = isinstance(err, EOFError) or "unexpected end" in str(err)
            # tarfile's words for a stream that ends before its first header is whole.
            cut = cut or (self._last is None and str(err) in _ENDS_BEFORE_A_HEADER)
            self._fault(CUT_SHORT if cut else CORRUPT, str(err))
        self._resolve_links()
        self._file_and_folder()
        self._fill_parents()
        for path, entry in self._refused.items():
            if path not in self._entries:
                self._entries[path] = entry
        self._fill_parents()
        for path, entry in self._entries.items():
            if entry.is_dir and entry.problem is None and misnamed(posixpath.basename(path), path):
                self.issues.append((path, "misnamed-folder", MISNAMED_FOLDER))
            elif not entry.is_dir and entry.problem is None and is_file_as_session(path):
                self.issues.append((path, "not-a-folder", FILE_AS_SESSION))
        block = [self._entries[p] for p in sorted(self._entries)]
        if self.incomplete is not None:
            # The archive's own root entry carries the fault, so that discover marks every
            # repository of the archive, and each of their sessions fails closed.
            message = (
                f"the archive {self.archive_name} is incomplete ({self.incomplete}): "
                "this session may have lost files"
            )
            block.insert(0, Entry("", True, 0, 0, message))
        yield block

    def _file_and_folder(self) -> None:
        """A file member whose name is also the folder of other members (`state.md` and
        `state.md/x.md`) is not read: extraction tools disagree on which it becomes (GNU tar
        keeps the file, bsdtar replaces it with the folder)."""
        folders: set[str] = set()
        for path in self._entries:
            parts = path.split("/")
            folders.update("/".join(parts[:n]) for n in range(1, len(parts)))
        for path in sorted(folders):
            entry = self._entries.get(path)
            # A link member with members under its name is the links' own case (_note_link).
            if entry is None or entry.is_dir or path in self._links:
                continue
            self._entries[path] = Entry(path, False, entry.size, entry.mtime_ns, FILE_AND_FOLDER)
            self._data.pop(path, None)
            self.issues.append((path, "duplicate-member", FILE_AND_FOLDER))

    def _fill_parents(self) -> None:
        """Parent folders of members are entries too, so empty session folders still show."""
        for path in list(self._entries):
            parent = posixpath.dirname(path)
            while parent and parent not in self._entries:
                self._entries[parent] = Entry(parent, True, 0, 0)
                parent = posixpath.dirname(parent)

    def _fault(self, why: str, detail: str) -> None:
        """The archive could not be read to its end: one issue for it, and it is incomplete."""
        self.incomplete = why
        where = f"after member {storable_name(self._last)!r}" if self._last else "at its start"
        lost = "members after it are lost; the members read before it are kept"
        if self._last is None:
            lost = "no member could be read"
        self.issues.append(
            (self.archive_name, "bad-archive", f"archive is {why} {where} ({detail}): {lost}")
        )

    def _note_link(self, name: str, target: str | None) -> None:
        """A link member standing where a session folder, or a folder above one, would be
        (`…-brainstorm`, `docs`, `docs/research`, `docs/history/brainstorms/x`): its sessions
        would vanish without a word. (A link in a session is that session's own issue; a
        link as a document, a document not read.) A folder link named like a session folder
        but for its case or spaces is noted as a misnamed folder is."""
        from pipeline.discover import innermost_session

        if (
            target is not None
            and self._is_folder(target)
            and misnamed(posixpath.basename(name), name)
        ):
            self.issues.append((name, "misnamed-folder", MISNAMED_FOLDER))
        parts = name.split("/")
        tail = "/".join(parts[-3:])
        above = parts[-1] == "docs" or tail.endswith(_ABOVE_SESSIONS)
        if above or innermost_session(parts) is not None:
            self.issues.append((name, "unreadable", f"{LINK}: {LINK_LEADS_NOWHERE}"))

    def _link(self, name: str, linkname: str, base: str | None) -> None:
        """Record a link member and where it leads, a member path inside the archive or None
        (absolute, or climbing out); `base` is the folder its target is relative to, None for
        the link's own folder."""
        folder = posixpath.dirname(name) if base is None else base
        if base is None:
            self._symbolic.add(name)
        joined = posixpath.normpath(posixpath.join(folder, linkname.replace("\\", "/")))
        out = not linkname or linkname.startswith("/") or joined == ".." or joined.startswith("../")
        self._links[name] = None if out else joined
        if not out and self._needs_target(name):
            self._targets.add(joined)

    @staticmethod
    def _needs_target(name: str) -> bool:
        """Whether what a link leads to could be read through it: a link a session or a link
        document could need, or a session folder (others keep nothing more in memory)."""
        return _wanted(name) or is_session_path(name)

    def _resolve_links(self) -> None:
        """A link that stays inside the archive reads as what it leads to, as a directory root
        reads a link inside it: a file link (or a hard link, which tar writes for any file with
        two names) as that file, a session folder link as that session; any other is noted where
        it could stand for sessions, and not read."""
        self._listed = sorted(self._entries)  # the members as listed, for look-ups by folder
        with contextlib.suppress(*FAULTS):  # what the first pass read stands; the rest unread
            self._reread(self._needed())
        folders = []
        for name in self._links:
            target = self._follow(name)
            entry = self._entries.get(target) if target is not None else None
            if target and entry is not None and not entry.is_dir and entry.problem is None:
                self._entries[name] = self._behind(name, target, entry)
                if self._entries[name].problem is None:
                    continue
            elif target is not None and self._leads_to_session(name, target):
                folders.append((name, target))
                continue
            self._note_link(name, target)
        # After the file links, so that a link inside a linked session is read there too.
        budget = max(MIN_ALIASED, ALIASED_PER_LISTED * len(self._listed))
        for name, target in folders:
            under = self._under(target)
            if len(under) > budget:
                self.issues.append((name, "unreadable", f"{LINK}: {ALIAS_LIMIT}"))
                continue
            budget -= len(under)
            self._alias(name, target, under)

    def _behind(self, name: str, target: str, entry: Entry) -> Entry:
        """The entry `name` has as a way to the file member `target`, whose bytes it shares; a
        member the link met after its bytes had gone by (a stream is read once) is not read."""
        if target in self._data:
            self._data[name] = self._data[target]
        elif entry.size <= MAX_FILE_BYTES:
            return Entry(name, False, entry.size, entry.mtime_ns, LINK)
        # Marked as a folder root marks a symbolic link: git reads some such files (a
        # .gitignore) as if they were not there, and the same tree must read alike in both.
        return Entry(name, False, entry.size, entry.mtime_ns, link=self._is_symbolic(name))

    def _is_symbolic(self, name: str) -> bool:
        """Whether a chain of links from `name` passes through a symbolic one."""
        hop: str | None = name
        for _ in range(MAX_LINK_HOPS):
            if hop is None or hop not in self._links:
                return False
            if hop in self._symbolic:
                return True
            hop = self._links[hop]
        return False

    def _needed(self) -> set[str]:
        """The file members some link leads to (or holds, for a session folder link) whose
        bytes went by before the link was met."""
        needed = set()
        targets = {self._follow(name): name for name in filter(self._needs_target, self._links)}
        for target, name in targets.items():
            entry = self._entries.get(target) if target is not None else None
            if target is None or (entry is None and not is_session_path(name)):
                continue
            if entry is not None and not entry.is_dir:
                paths: list[tuple[str, Entry]] = [(target, entry)]
            else:  # a session folder link: every member under its target
                paths = self._under(target)
            for path, member in paths:
                readable = not member.is_dir and member.problem is None
                if readable and member.size <= MAX_FILE_BYTES and path not in self._data:
                    needed.add(path)
        return needed

    def _reread(self, needed: set[str]) -> None:
        """The bytes of `needed` members, in a second pass over the archive (only when a link
        needs members read before it: a stream cannot go back), ending at the last of them: a
        pass to the end would decompress what the first pass stopped at, a bomb included."""
        if not needed:
            return
        if self.is_zip:
            with zipfile.ZipFile(self.path) as archive:
                for info in archive.infolist():
                    name = _safe_name(storable_name(_zip_name(info).rstrip("/\\")))
                    if name is not None and name in needed:
                        self._data[name] = archive.read(info)
            return
        last = max(self._places.get(name, -1) for name in needed)
        with tarfile.open(self.path, mode="r|*") as tar:
            for place, member in enumerate(tar):
                if place > last:
                    break
                name = _safe_name(storable_name(member.name))
                if name in needed and member.isfile() and (handle := tar.extractfile(member)):
                    self._data[name] = handle.read(member.size + 1)

    def _kept(self, name: str) -> bool:
        """Whether a member's bytes are kept: a session or a link document could need it, or a
        link met so far leads to it or to a folder holding it."""
        if _wanted(name):
            return True
        parts = name.split("/")
        return any("/".join(parts[:n]) in self._targets for n in range(1, len(parts) + 1))

    def _follow(self, name: str) -> str | None:
        """The member a chain of links ends at; None when it leaves the archive or loops."""
        target = self._links.get(name)
        for _ in range(MAX_LINK_HOPS):
            if target is None or target not in self._links:
                return target
            target = self._links[target]
        return None

    def _leads_to_session(self, name: str, target: str) -> bool:
        """Whether a link is a session folder leading to a folder of the archive that does not
        hold it (one leading back to an enclosing folder is a loop), and under whose own name
        the archive holds no members: those are read as they are, not hidden by the target's
        (extraction tools disagree on such a tree; the link is noted)."""
        loops = name.startswith(f"{target}/") or not target
        if loops or not is_session_path(name) or self._under(name):
            return False
        return self._is_folder(target)

    def _is_folder(self, path: str) -> bool:
        """Whether a member path is a folder of the archive (listed, or holding members)."""
        entry = self._entries.get(path)
        if entry is not None:
            return entry.is_dir and entry.problem is None
        return bool(self._under(path))

    def _under(self, folder: str) -> list[tuple[str, Entry]]:
        """The listed members under a folder, found by bisection ('0' sorts right after '/'),
        so that many links cost no scan of every member each."""
        start = bisect_left(self._listed, f"{folder}/")
        end = bisect_left(self._listed, f"{folder}0", start)
        return [(path, self._entries[path]) for path in self._listed[start:end]]

    def _alias(self, name: str, target: str, under: list[tuple[str, Entry]]) -> None:
        """A session folder link: the members under its target again, under the link's name."""
        link = self._entries[name]
        self._entries[name] = Entry(name, True, 0, link.mtime_ns)
        for path, entry in under:
            alias = f"{name}{path[len(target) :]}"
            if entry.is_dir or entry.problem is not None:
                self._entries[alias] = Entry(
                    alias, entry.is_dir, entry.size, entry.mtime_ns, entry.problem
                )
            else:
                self._entries[alias] = self._behind(alias, path, entry)

    def _add(
        self, raw_name: str, is_dir: bool, size: int, mtime: float, problem: str | None
    ) -> str | None:
        # A tar keeps undecodable bytes of a name as lone surrogates; no Parquet string holds
        # those, so the name is kept with U+FFFD in their place, and the member is not read.
        shown = storable_name(raw_name)
        if shown != raw_name and problem is None:
            problem = BAD_NAME
        name = _safe_name(shown)
        if name is None:
            inside = _inside(shown)
            why = INNER_DOT_DOT if inside is not None else CLIMBS_OUT
            # Where it would be extracted: an absolute `/repo/docs/…/forks.md` is that session's
            # forks.md to every extraction tool, so it must not read as absent there.
            lands = inside if inside is not None else _landing(shown)
            if lands is not None and not is_dir:
                # Not read, so as not to stand for a member the archive holds under that name;
                # where it holds none, the session there shows a file it could not read.
                self._refused[lands] = Entry(lands, False, size, int(mtime * 1e9), why)
            self.issues.append((shown, "unsafe-member", why))
            return None
        if not name:
            return None
        if name in self._entries and not is_dir:
            self.issues.append(
                (name, "duplicate-member", "archive holds this name twice; last kept")
            )
            # The last copy wins whole: an earlier copy's bytes must not stand in for a last
            # one that is not read (too large, a link, a bad name).
            self._data.pop(name, None)
        self._entries[name] = Entry(name, is_dir, size, int(mtime * 1e9), problem)
        return name

    def _load_tar(self) -> None:
        total, limit = 0, self.limit
        with _Reading.open(self.path, mode="r|*", tarinfo=_Headers) as archive:
            for place, member in enumerate(archive):
                self._last = member.name
                problem = None
                if member.issym() or member.islnk():
                    problem = LINK
                elif not (member.isfile() or member.isdir()):
                    problem = "special archive member; not read"
                name = self._add(member.name, member.isdir(), member.size, member.mtime, problem)
                if name is not None:
                    self._places[name] = place
                if name is not None and problem == LINK:
                    # A hard link names its target from the archive's top, a symbolic one from
                    # its own folder.
                    self._link(name, member.linkname, "" if member.islnk() else None)
                if name is None or self._entries[name].problem or not member.isfile():
                    continue
                total += member.size
                if total > limit:
                    self._bomb()
                    return
                if member.size <= MAX_FILE_BYTES and self._kept(name):
                    handle = archive.extractfile(member)
                    if handle is not None:
                        self._data[name] = handle.read(member.size + 1)
            if archive.ended_early is not None:
                # GNU tar says "unexpected end of file" here; tarfile just stops.
                self._fault(archive.ended_early, "no end-of-archive block")

    def _load_zip(self) -> None:
        total, limit = 0, self.limit
        with zipfile.ZipFile(self.path) as archive:
            for info in archive.infolist():
                is_link = (info.external_attr >> 16) & 0o170000 == 0o120000
                problem = LINK if is_link else None
                mtime = _zip_time(info.date_time)
                raw = _zip_name(info)
                # A name is read with `\` as a separator (a zip made on Windows), so a folder's
                # name may end in `\` too: a folder, as unzip extracts it, not an empty file.
                is_dir = info.is_dir() or raw.endswith("\\")
                name = self._add(raw.rstrip("/\\"), is_dir, info.file_size, mtime, problem)
                if name is not None and is_link:
                    self._link(name, _zip_link_text(archive, info), None)
                if name is None or problem or is_dir:
                    continue
                total += info.file_size
                if total > limit:
                    self._bomb()
                    return
                if info.file_size <= MAX_FILE_BYTES and self._kept(name):
                    self._read_zip_member(archive, info, name)

    def _read_zip_member(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> None:
        """One member's bytes; a member that cannot be read (corrupt, encrypted, an unknown
        method) is unread, and the others are read still: a zip lists every member up front."""
        try:
            with archive.open(info) as handle:
                data = handle.read(info.file_size + 1)
        except FAULTS as err:
            # zipfile's message for an encrypted member quotes the whole ZipInfo: say it plainly.
            why = "encrypted, no password" if info.flag_bits & 0x1 else str(err)
            problem = f"archive member could not be read ({why or type(err).__name__}); not read"
            entry = self._entries[name]
            self._entries[name] = Entry(name, False, entry.size, entry.mtime_ns, problem)
            self.issues.append((name, "bad-archive", problem))
            return
        if len(data) <= MAX_FILE_BYTES:
            self._data[name] = data

    @cached_property  # its first bytes are read once, not on each pass over the archive
    def is_zip(self) -> bool:
        """Whether the archive is read as a zip: by its first bytes where they say, as `file`
        does (a zip renamed .tar.gz, a .tar.gz renamed .zip), else by its name (a zip may
        begin with a program, a self-extracting one)."""
        try:
            # Not blocking: a FIFO swapped in for the archive must not hang the crawl here.
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            try:
                head = os.read(fd, _MAGIC_BYTES)
            finally:
                os.close(fd)
        except OSError:
            head = b""
        # A tar header first: its first bytes are a member's name, which may be anything.
        if head[257:262] == b"ustar":
            return False
        if head.startswith(_ZIP_MAGIC):
            return True
        if head.startswith(_TAR_MAGIC):
            return False
        return self.path.lower().endswith(".zip")

    @property
    def limit(self) -> int:
        """How many member bytes this archive may expand to before it counts as a bomb."""
        try:
            size = os.path.getsize(self.path)
        except OSError:
            size = 0
        return min(MAX_ARCHIVE_BYTES, max(MIN_EXPANSION_BYTES, EXPANSION_RATIO * size))

    def _bomb(self) -> None:
        self.incomplete = SIZE_LIMIT
        self.issues.append(
            (
                self.archive_name,
                "archive-too-large",
                f"members expand past {self.limit} bytes ({EXPANSION_RATIO}x the archive, at least "
                f"{MIN_EXPANSION_BYTES}): a decompression bomb; reading stopped there",
            )
        )

    def read(self, path: str) -> bytes:
        if path in self._data:
            return self._data[path]
        entry = self._entries.get(path)
        if entry is None:
            raise ReadError("vanished", "no such archive member")
        if entry.size > MAX_FILE_BYTES:
            raise ReadError(
                "too-large", f"file is {entry.size} bytes, over the 8 MiB limit; not read"
            )
        raise ReadError("unreadable", "archive member could not be read")


def _zip_link_text(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    """Where a zip's symbolic link member leads: its data, the target path; '' when unreadable
    (a link of more than a path's length is no link a zip tool writes)."""
    if info.file_size > 4096:
        return ""
    try:
        return archive.read(info).decode("utf-8", "replace")
    except FAULTS:
        return ""


def _zip_time(date_time: tuple[int, int, int, int, int, int]) -> float:
    import calendar

    try:
        return float(calendar.timegm((*date_time, 0, 0, 0)))
    except (ValueError, OverflowError):
        return 0.0


# The zip flag that says a member's name is UTF-8; without it zipfile decodes cp437.
_UTF8_FLAG = 0x800


def _zip_name(info: zipfile.ZipInfo) -> str:
    """A member's name as its writer meant it: Info-ZIP on Linux and macOS writes UTF-8 names
    without the UTF-8 flag, which zipfile reads as cp437 (`café` as `caf├⌐`); such a name
    that is valid UTF-8 is read as UTF-8, as tar and directory roots give it."""
    if info.flag_bits & _UTF8_FLAG:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename
