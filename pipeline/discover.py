"""Session folders found by path alone (spec §2), grouped by repository.

`docs/research/{topic}-brainstorm/` and `docs/history/brainstorms/{topic}/`;
the repository root is the folder that holds that `docs/`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from pipeline.parse.lexical import is_markdown
from pipeline.parse.links import composed
from pipeline.sources.archive import LINK
from pipeline.sources.tree import BROKEN_LINK, DIR_LINK, OUT_OF_ROOT, Entry, is_unlisted

SUFFIX = "-brainstorm"


@dataclass
class SessionRef:
    repo_path: str  # repository root relative to the crawl root ('' for the root itself)
    path: str  # session folder relative to the repository root
    topic: str
    location: str
    entries: list[Entry] = field(default_factory=list)  # files, with paths relative to the session

    @property
    def root_path(self) -> str:
        return f"{self.repo_path}/{self.path}" if self.repo_path else self.path


@dataclass
class RepoRef:
    path: str  # relative to the crawl root ('' for the root itself)
    sessions: dict[str, SessionRef] = field(default_factory=dict)
    # Markdown documents outside every session folder, paths relative to the repository.
    documents: list[Entry] = field(default_factory=list)
    # Every file path in the repository, for manifest destinations that must exist.
    files: set[str] = field(default_factory=set)
    # Paths the walk does not see into (hides_folder), relative to the repository → why: a
    # destination under one may exist, unread.
    unseen: dict[str, str] = field(default_factory=dict)
    has_git: bool = False
    # Why the repository may lack files (it sits in an archive read only in part); None when whole.
    incomplete: str | None = None


def research_folder(topic: str) -> str:
    return f"docs/research/{topic}{SUFFIX}"


def history_folder(topic: str) -> str:
    return f"docs/history/brainstorms/{topic}"


def match_session(parts: list[str]) -> tuple[int, int, str, str] | None:
    """(index of 'docs', length of the session prefix, topic, location) for a path's parts:
    the outermost session folder the path lies in or is."""
    return next(session_matches(parts), None)


def session_matches(parts: list[str]) -> Iterator[tuple[int, int, str, str]]:
    """Every session folder the path lies in or is, outermost first, as match_session gives
    one: a folder of the layout is a session wherever it lies (spec §2: by its path alone),
    also inside another session (a copy kept under `basis/`)."""
    i = 0
    while i < len(parts) - 2:
        found = None
        if parts[i] == "docs" and parts[i + 1] == "research" and parts[i + 2].endswith(SUFFIX):
            # `-brainstorm` is a session whose topic is empty: the path names one (spec §2), and
            # skipping it would leave its folder unchecked without a word.
            found = (i, i + 3, parts[i + 2][: -len(SUFFIX)], "research")
        elif parts[i : i + 3] == ["docs", "history", "brainstorms"] and len(parts) > i + 3:
            found = (i, i + 4, parts[i + 3], "history")
        if found is None:
            i += 1
            continue
        yield found
        i = found[1]


def sessions_holding(parts: list[str], is_dir: bool) -> list[tuple[int, int, str, str]]:
    """The session folders a path lies in, and the one it is when it is a folder: a file named
    like a session folder (docs/history/brainstorms/README.md) is none."""
    return [m for m in session_matches(parts) if m[1] < len(parts) or is_dir]


def session_folder_holding(path: str | os.PathLike[str], is_dir: bool) -> Path | None:
    """The innermost session folder that a path, links resolved, lies in (or is, when it is
    a folder), whichever root holds it: the layout of its path says so (§2)."""
    parts = list(Path(os.path.realpath(path)).parts)
    holding = sessions_holding(parts, is_dir)
    return Path(*parts[: holding[-1][1]]) if holding else None


def innermost_session(parts: list[str]) -> tuple[int, int, str, str] | None:
    """The session folder a path is (the innermost match ending at it), None when it is none."""
    found = [m for m in session_matches(parts) if m[1] == len(parts)]
    return found[-1] if found else None


def misnamed_session(parts: list[str]) -> bool:
    """A folder the layout would make a session folder but for the case or the spaces around
    its names (`X-Brainstorm`, `x-brainstorm `, `docs/History/brainstorms/x`), or the spelling
    of its suffix (`x_brainstorm`, `x.brainstorm`, `x-brainstorms`, `x-brainstorming`,
    `brainstorm-x`, `docs/history/brainstorm/x`: until 2026-12-07 these vanished without a
    word, found by a hunt): no session by spec §2's words, and noted, since it would
    otherwise leave a folder meant as one unchecked without a word."""
    if innermost_session(parts) is not None:
        return False
    return innermost_session(_as_laid_out(parts)) is not None


# A research folder's suffix spelt another way, or put first: the topic, then the layout's.
_SPELT_SUFFIX_RE = re.compile(r"(.+?)(?:[_ .]brainstorm|[-_ .]brainstorm(?:s|ing))")
_SUFFIX_FIRST_RE = re.compile(r"brainstorm[-_ .](.+)")


def _as_laid_out(parts: list[str]) -> list[str]:
    """The path's names as the layout spells them: case, spaces around a name and the
    suffix's spelling aside."""
    names = [p.strip().casefold() for p in parts]
    for i in range(2, len(names)):
        if names[i - 2 : i] == ["docs", "research"]:
            m = _SPELT_SUFFIX_RE.fullmatch(names[i]) or _SUFFIX_FIRST_RE.fullmatch(names[i])
            if m is not None:
                names[i] = m[1] + SUFFIX
        elif names[i - 2 : i] == ["docs", "history"] and names[i] == "brainstorm":
            names[i] = "brainstorms"
    return names


def hides_folder(entry: Entry) -> bool:
    """An entry whose path may stand for a folder the walk does not see into: one it could
    not list, or a link it does not follow (to a folder, out of the root, to nothing; in an
    archive, any left unread). A path under it may exist for the repository's readers."""
    return is_unlisted(entry) or entry.problem in (DIR_LINK, OUT_OF_ROOT, BROKEN_LINK, LINK)


def discover(entries: Iterable[Entry]) -> list[RepoRef]:
    """Group one block of entries into repositories with their sessions and documents."""
    repos: dict[str, RepoRef] = {}
    rest: list[Entry] = []
    incomplete = None
    for entry in entries:
        if not entry.path:
            # The root itself: an archive read only in part says so here.
            incomplete = entry.problem if entry.is_dir else None
            continue
        parts = entry.path.split("/")
        found = sessions_holding(parts, entry.is_dir)
        if not found:
            rest.append(entry)
            continue
        for docs_at, depth, topic, location in found:
            _add_to_session(repos, parts, entry, docs_at, depth, topic, location)
    for repo in repos.values():
        repo.incomplete = incomplete
    gits = {e.path.rpartition("/")[0] for e in rest if e.problem == "git"}
    for repo_path in gits & repos.keys():
        repos[repo_path].has_git = True
    # Longest repository path first: a file belongs to the innermost repository holding it and
    # to those around it, up to one with a .git of its own (a separate repository). A package's
    # docs/ in a monorepo makes it a repository root, and its README is still the monorepo's.
    ordered = sorted(repos, key=len, reverse=True)
    for entry in rest:
        for owner in _owners(entry.path, ordered, gits):
            repo = repos[owner]
            rel = entry.path[len(owner) + 1 :] if owner else entry.path
            if hides_folder(entry):
                repo.unseen[rel] = entry.problem or ""
            if entry.is_dir:
                if is_unlisted(entry):
                    # A folder of documents not listed may hold a link into any session.
                    repo.documents.append(_relative(entry, rel))
                continue
            repo.files.add(rel)
            if is_markdown(rel):
                repo.documents.append(_relative(entry, rel))
    return [repos[p] for p in sorted(repos)]


def _add_to_session(
    repos: dict[str, RepoRef],
    parts: list[str],
    entry: Entry,
    docs_at: int,
    depth: int,
    topic: str,
    location: str,
) -> None:
    """The entry as one session's (the session folder itself, or a file or folder in it)."""
    repo_path = "/".join(parts[:docs_at])
    repo = repos.setdefault(repo_path, RepoRef(repo_path))
    folder = "/".join(parts[docs_at:depth])
    session = repo.sessions.get(folder)
    if session is None:
        session = repo.sessions[folder] = SessionRef(repo_path, folder, topic, location)
    inner = "/".join(parts[depth:])
    if inner:
        session.entries.append(_relative(entry, inner))
        if not entry.is_dir:
            repo.files.add("/".join(parts[docs_at:]))
    elif is_unlisted(entry):
        session.entries.append(_relative(entry, "."))  # the session folder was not listed


def _owners(path: str, repo_paths: list[str], gits: set[str]) -> Iterator[str]:
    """The repositories holding `path`, innermost first, up to the first with its own .git."""
    for repo_path in repo_paths:
        if not repo_path or path.startswith(repo_path + "/"):
            yield repo_path
            if repo_path in gits:
                return


def _relative(entry: Entry, path: str) -> Entry:
    return replace(entry, path=path)


def session_key(repo_identity: str, topic: str) -> str:
    """Stable across runs and across the move from research to history, whatever the Unicode
    form the topic is spelled in at either end (macOS writes a name it is given decomposed)."""
    return hashlib.sha256(f"{repo_identity}\x1f{composed(topic)}".encode()).hexdigest()[:32]
