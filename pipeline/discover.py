"""Session folders found by path alone (spec §2), grouped by repository.

`docs/research/{topic}-brainstorm/` and `docs/history/brainstorms/{topic}/`;
the repository root is the folder that holds that `docs/`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from pipeline.parse.lexical import is_markdown
from pipeline.sources.tree import Entry

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
    has_git: bool = False
    # Why the repository may lack files (it sits in an archive read only in part); None when whole.
    incomplete: str | None = None


def research_folder(topic: str) -> str:
    return f"docs/research/{topic}{SUFFIX}"


def history_folder(topic: str) -> str:
    return f"docs/history/brainstorms/{topic}"


def match_session(parts: list[str]) -> tuple[int, int, str, str] | None:
    """(index of 'docs', length of the session prefix, topic, location) for a path's parts."""
    for i in range(len(parts) - 2):
        if parts[i] != "docs":
            continue
        if parts[i + 1] == "research" and parts[i + 2].endswith(SUFFIX):
            topic = parts[i + 2][: -len(SUFFIX)]
            if topic:
                return i, i + 3, topic, "research"
        if parts[i + 1] == "history" and parts[i + 2] == "brainstorms" and len(parts) > i + 3:
            return i, i + 4, parts[i + 3], "history"
    return None


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
        found = match_session(parts)
        # A file named like a session folder (docs/history/brainstorms/README.md) is a document.
        if found is None or (found[1] == len(parts) and not entry.is_dir):
            rest.append(entry)
            continue
        docs_at, depth, topic, location = found
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
    for repo in repos.values():
        repo.incomplete = incomplete
    # Longest repository path first, so a nested repository claims its own documents.
    ordered = sorted(repos, key=len, reverse=True)
    for entry in rest:
        owner = _owner(entry.path, ordered)
        if owner is None:
            continue
        repo = repos[owner]
        rel = entry.path[len(owner) + 1 :] if owner else entry.path
        if entry.problem == "git" and "/" not in rel:
            repo.has_git = True
        if entry.is_dir:
            continue
        repo.files.add(rel)
        if is_markdown(rel):
            repo.documents.append(_relative(entry, rel))
    return [repos[p] for p in sorted(repos)]


def _owner(path: str, repo_paths: list[str]) -> str | None:
    for repo_path in repo_paths:
        if not repo_path or path.startswith(repo_path + "/"):
            return repo_path
    return None


def _relative(entry: Entry, path: str) -> Entry:
    return Entry(path, entry.is_dir, entry.size, entry.mtime_ns, entry.problem)


def session_key(repo_identity: str, topic: str) -> str:
    """Stable across runs and across the move from research to history."""
    return hashlib.sha256(f"{repo_identity}\x1f{topic}".encode()).hexdigest()[:32]
