"""From a repository's listing to SessionInputs: read the files, git facts, inbound links.

Shared by the crawl (many repositories) and `census detect` (one folder).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.discover import RepoRef, SessionRef, history_folder, research_folder
from pipeline.parse.links import extract_links, is_inside, resolve
from pipeline.parse.manifest import parse_manifest
from pipeline.parse.records import Records
from pipeline.parse.session import LinkIn, SessionInput
from pipeline.sources.git import GitRepo
from pipeline.sources.tree import ReadError

Reader = Callable[[str], bytes]


@dataclass
class RepoContext:
    """One repository as the crawl sees it: where it is, how to read it, what git says."""

    repo: RepoRef
    read: Reader  # repository-relative path → bytes
    git: GitRepo | None = None
    git_prefix: str = ""  # the repository's path inside the git working tree
    issues: list[tuple[str, str, str]] = field(default_factory=list)
    _links: dict[str, list[LinkIn]] | None = None

    def tracked(self, session: SessionRef) -> list[str] | None:
        if self.git is None:
            return None
        folder = f"{self.git_prefix}/{session.path}" if self.git_prefix else session.path
        return self.git.tracked_under(folder)

    def links_into(self, topic: str) -> list[LinkIn]:
        if self._links is None:
            self._links = self._scan_links()
        return self._links.get(topic, [])

    def _scan_links(self) -> dict[str, list[LinkIn]]:
        topics = {s.topic for s in self.repo.sessions.values()}
        folders = [(t, research_folder(t)) for t in topics] + [
            (t, history_folder(t)) for t in topics
        ]
        needles = [t.encode("utf-8", "surrogateescape") for t in topics]
        found: dict[str, list[LinkIn]] = {}
        for doc in self.repo.documents:
            if doc.problem:
                continue
            try:
                data = self.read(doc.path)
            except ReadError as err:
                self.issues.append((doc.path, err.code, err.message))
                continue
            # A document outside a session folder can only link into it by naming its topic
            # (or by escaping the name), so the rest need no Markdown parse.
            if b"%" not in data and b"&#" not in data and not any(n in data for n in needles):
                continue
            text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
            for line, kind, target in extract_links(text):
                resolved = resolve(doc.path, target)
                if resolved is None:
                    continue
                for topic, folder in folders:
                    if is_inside(resolved, folder):
                        found.setdefault(topic, []).append(
                            LinkIn(doc.path, line, kind, target, resolved)
                        )
        return found


def session_input(ctx: RepoContext, session: SessionRef) -> SessionInput:
    inp = SessionInput(session.location, session.topic, session.path)
    for entry in session.entries:
        if entry.path == "ops" or entry.path.startswith("ops/"):
            inp.has_ops_dir = True
        if entry.is_dir:
            continue
        inp.sizes[entry.path] = entry.size
        if entry.problem:
            inp.unreadable.append((entry.path, "unreadable", entry.problem))
            continue
        try:
            inp.files[entry.path] = ctx.read(f"{session.path}/{entry.path}")
        except ReadError as err:
            inp.unreadable.append((entry.path, err.code, err.message))
    inp.tracked = ctx.tracked(session)
    inp.links = ctx.links_into(session.topic)
    manifest = inp.files.get("ops/manifest.md")
    if manifest is not None:
        inp.existing_destinations = frozenset(
            d for d in manifest_destinations(manifest) if d in ctx.repo.files
        )
    return inp


def manifest_destinations(data: bytes) -> list[str]:
    from pipeline.parse.lexical import decode

    scratch = Records("")
    parse_manifest(decode(data, "ops/manifest.md", scratch), scratch)
    return [r["destination_path"] for r in scratch.of("manifest_rows") if r["destination_path"]]


def repo_signature(ctx: RepoContext) -> str:
    """File metadata that, unchanged, means no session of the repository changed either."""
    h = hashlib.sha256()
    for path in sorted(ctx.repo.files):
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
    for doc in ctx.repo.documents:
        h.update(f"{doc.path}\0{doc.size}\0{doc.mtime_ns}\n".encode("utf-8", "surrogateescape"))
    if ctx.git is not None:
        try:
            st = os.stat(os.path.join(ctx.git.path, ".git", "index"))
            h.update(f"index\0{st.st_size}\0{st.st_mtime_ns}".encode())
        except OSError:
            h.update(b"index\0none")
    return h.hexdigest()


def session_signature(repo_sig: str, session: SessionRef) -> str:
    h = hashlib.sha256(repo_sig.encode())
    for e in session.entries:
        h.update(
            f"{e.path}\0{e.is_dir}\0{e.size}\0{e.mtime_ns}\0{e.problem}\n".encode(
                "utf-8", "surrogateescape"
            )
        )
    return h.hexdigest()[:32]
