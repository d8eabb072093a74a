"""From a repository's listing to SessionInputs: read the files, git facts, inbound links.

Shared by the crawl (many repositories) and `census detect` (one folder).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import cache
from urllib.parse import unquote_to_bytes

from pipeline.discover import (
    RepoRef,
    SessionRef,
    history_folder,
    match_session,
    research_folder,
    sessions_holding,
)
from pipeline.parse.lexical import MARKDOWN_SUFFIXES, MAX_FILE_BYTES, is_markdown
from pipeline.parse.links import (
    TooDeep,
    composed,
    extract_links,
    is_inside,
    resolve,
    same_name,
)
from pipeline.parse.manifest import parse_manifest
from pipeline.parse.records import Records
from pipeline.parse.session import EXISTS_FLAGS, RULE_FOLDERS, LinkIn, SessionInput, is_ops
from pipeline.sources.git import GitHistory, GitRepo, git_index
from pipeline.sources.tree import FOLDER_VANISHED, VANISHED, Entry, ReadError, is_unlisted

# A document with NUL bytes is no UTF-8 text (UTF-16, say): its links cannot be read, so it is
# a document not read (its rule fails), never one without links.
NUL = b"\x00"
NOT_TEXT = "file holds NUL bytes: not UTF-8 text (UTF-16?); its links cannot be read"
BOM = b"\xef\xbb\xbf"
# A character reference, numeric (`&#47;`) or named (`&sol;`): a link's target may spell any
# character of a folder's path with one.
# A document under this folder may name a harvested session's folder by its topic alone.
HISTORY_FOLDERS = history_folder("")
_REFERENCE_RE = re.compile(rb"&(?:#|[A-Za-z][A-Za-z0-9]{1,31};)")

Reader = Callable[[str], bytes]


@dataclass
class RepoContext:
    """One repository as the crawl sees it: where it is, how to read it, what git says."""

    repo: RepoRef
    read: Reader  # repository-relative path → bytes
    git: GitRepo | None = None
    git_prefix: str = ""  # the repository's path inside the git working tree
    issues: list[tuple[str, str, str]] = field(default_factory=list)
    # Session folder → (file, commit) pairs that commits tracked (with --git-history).
    tracked_history: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # A commit's snapshot: git context, but no index (everything in a commit is tracked).
    index_free: bool = False
    # A commit's documents by blob id, and links found per (document, blob) across commits.
    blob_ids: dict[str, str] = field(default_factory=dict)
    link_cache: dict[tuple[str, str], list[tuple[int, str, str, str]]] | None = None
    # Why git could not walk the history (with --git-history): the series rules fail.
    history_problem: str = ""
    # Documents that could not be read (path → code, message): their links are unknown.
    unreadable_documents: dict[str, tuple[str, str]] = field(default_factory=dict)
    # The repository's folder on disk ('' for an archive or a commit): git working trees nested
    # below its root (a submodule or a clone at docs/, at a session folder) are looked for there.
    base: str = ""
    # The folders the repository root sits in, its own name last (resolve(): a link that
    # climbs out of the root and names them on the way back is a link into the repository).
    root_names: tuple[str, ...] = ()
    # The working tree whose index could not be read, when tracked() gave None for that.
    unread_git: GitRepo | None = None
    # Session folder → why a nested working tree's history could not be read (--git-history).
    nested_history_problem: dict[str, str] = field(default_factory=dict)
    # Session folder → why its own history was not read (--git-history): the series rules fail.
    session_history_problem: dict[str, str] = field(default_factory=dict)
    _links: dict[str, list[LinkIn]] | None = None
    _history: GitHistory | None = None
    _nested: dict[str, GitRepo] = field(default_factory=dict)
    # Session folder → session_trees(): asked for its index, its stamps and its history.
    _trees: dict[str, list[tuple[GitRepo, str, str]]] = field(default_factory=dict)
    _spellings: dict[str, list[SessionRef]] | None = None
    _places: dict[tuple[str, str], str] | None = None

    def twins(self, session: SessionRef) -> list[str]:
        """The other session folders spelling the session's topic in another Unicode form: one
        session key, one folder on a disk blind to Unicode forms (built once per repository)."""
        if self._spellings is None:
            self._spellings = {}
            for other in self.repo.sessions.values():
                if not other.topic.isascii():
                    self._spellings.setdefault(composed(other.topic), []).append(other)
        if session.topic.isascii():
            return []
        alike = self._spellings.get(composed(session.topic), [])
        return sorted(other.path for other in alike if other.topic != session.topic)

    def other_place(self, session: SessionRef) -> str | None:
        """The topic's folder in the repository's other location (a move half done), as the
        twins' spellings are kept: the first by path when there are several."""
        if self._places is None:  # built once per repository: a monorepo holds many sessions
            self._places = {}
            for other in sorted(self.repo.sessions.values(), key=lambda o: o.path, reverse=True):
                self._places[(other.location, composed(other.topic))] = other.path
        wanted = "history" if session.location == "research" else "research"
        return self._places.get((wanted, composed(session.topic)))

    def tracked(self, session: SessionRef) -> list[str] | None:
        """Paths under the session folder (relative to it) that a git index tracks: that of the
        repository's working tree, or of one nested in it, whose own index alone lists the
        files below it (a submodule's are no superproject's). None without git context, or
        when an index cannot be read (`unread_git` then names the working tree)."""
        self.unread_git = None
        if self.index_free:
            return []
        trees = self.session_trees(session)
        if not trees:
            return None
        found: set[str] = set()
        for repo, folder, lead in trees:
            names = repo.tracked_under(folder)
            if names is None:
                self.unread_git = repo
                return None
            found.update(lead + name for name in names)
        return sorted(found)

    def session_trees(self, session: SessionRef) -> list[tuple[GitRepo, str, str]]:
        """(working tree, the session folder's path in it, the path of the tree's names in the
        session folder) for each working tree that holds files of the session."""
        known = self._trees.get(session.path)
        if known is None:
            known = self._trees[session.path] = self._find_trees(session)
        return known

    def _find_trees(self, session: SessionRef) -> list[tuple[GitRepo, str, str]]:
        trees = []
        if self.git is not None:
            folder = f"{self.git_prefix}/{session.path}" if self.git_prefix else session.path
            trees.append((self.git, folder, ""))
        if not self.base:
            return trees
        if self.git is not None:
            trees += self._linked_tree(self.git, session)
        parts = session.path.split("/")
        for depth in range(1, len(parts) + 1):  # docs/, docs/research/, the session folder
            top = "/".join(parts[:depth])
            if os.path.lexists(os.path.join(self.base, top, ".git")):
                trees.append((self._nested_repo(top), "/".join(parts[depth:]), ""))
        for entry in session.entries:
            # A working tree inside the session's ops/ (one elsewhere in it, a clone kept under
            # basis/, holds no ops/ file of this session).
            inner = entry.path.removesuffix("/.git")
            if entry.problem == "git" and is_ops(inner.partition("/")[0]):
                trees.append((self._nested_repo(f"{session.path}/{inner}"), "", inner + "/"))
        return trees

    def _linked_tree(self, git: GitRepo, session: SessionRef) -> list[tuple[GitRepo, str, str]]:
        """The session folder where git sees it when it is reached through a symbolic link
        inside the working tree (`docs/research/x-brainstorm -> ../../shared/x`): git tracks
        its files under the link's target, so its ops/ files there are tracked by git too."""
        real = os.path.realpath(os.path.join(self.base, session.path))
        rel = os.path.relpath(real, os.path.realpath(git.path)).replace(os.sep, "/")
        named = f"{self.git_prefix}/{session.path}" if self.git_prefix else session.path
        if rel in (named, ".", "..") or rel.startswith("../"):
            return []
        return [(git, rel, "")]

    def nested_ops_history(self, session: SessionRef) -> None:
        """With --git-history: the ops/ files that commits of a working tree nested in the
        repository tracked (its history is no part of the repository's); one git cannot walk
        leaves whether an ops/ file was ever tracked unknown (`nested_history_problem`)."""
        trees = self.session_trees(session)[1 if self.git is not None else 0 :]
        known = self.tracked_history.setdefault(session.path, [])
        for repo, folder, lead in trees:
            found = _nested_ops(repo, folder, lead, session)
            if found is None:
                self.nested_history_problem[session.path] = (
                    f"git could not read the history of {repo.path} ({repo.failure}): "
                    "whether a commit tracked an ops/ file is unknown"
                )
                continue
            for path, commit in found:
                if all(f != path for f, _ in known):
                    known.append((path, commit))
        known.sort()

    def linked_history(self, session: SessionRef) -> None:
        """With --git-history: a session folder reached through a symbolic link has its
        commits under the link's target (in the working tree) or in no commit of the
        repository (outside it), which the walk of docs/ does not read, so a step back there
        cannot be seen and its series rules fail closed."""
        if self.git is None or not self.base:
            return
        real = os.path.realpath(os.path.join(self.base, session.path))
        if real == os.path.join(os.path.realpath(self.base), session.path):
            return
        inside = [target for _, target, _ in self._linked_tree(self.git, session)]
        where = f"{inside[0]} inside" if inside else "a folder outside"
        self.session_history_problem[session.path] = (
            f"the session folder is a symbolic link to {where} the repository: --git-history "
            "does not read the commits under the link's target, so a step back along them "
            "cannot be seen"
        )

    def _nested_repo(self, path: str) -> GitRepo:
        if path not in self._nested:
            self._nested[path] = GitRepo(os.path.join(self.base, path))
        return self._nested[path]

    def history(self) -> GitHistory:
        assert self.git is not None
        if self._history is None:
            self._history = GitHistory(self.git)
        return self._history

    def close(self) -> None:
        if self._history is not None:
            self._history.close()

    def links_into(self, topic: str) -> list[LinkIn]:
        if self._links is None:
            self._links = self._scan_links()
        return self._links.get(topic, [])

    def links_in_sessions(self, paths: list[str], topic: str) -> list[LinkIn]:
        """Links into the topic's folders from files inside session folders, which are no
        repository documents: a manifest may route a row into another session's forks.md.
        Read when asked; one that cannot be read is a document not read."""
        folders = (research_folder(topic), history_folder(topic))
        found = []
        for path in paths:
            try:
                data = self.read(path)
            except ReadError as err:
                self.unreadable_documents[path] = (err.code, err.message)
                continue
            if NUL in data:
                self.unreadable_documents[path] = ("binary", NOT_TEXT)
                continue
            own = any(is_inside(path, folder) for folder in folders)
            root = self.root_names
            try:
                links = (
                    _parsed_links(path, data, root)
                    if own
                    else _resolved_links(path, data, {topic}, root)
                )
            except ReadError as err:
                self.unreadable_documents[path] = (err.code, err.message)
                continue
            for line, kind, target, resolved in links:
                if any(is_inside(resolved, folder) for folder in folders):
                    found.append(LinkIn(path, line, kind, target, resolved))
        return found

    def _scan_links(self) -> dict[str, list[LinkIn]]:
        topics = {s.topic for s in self.repo.sessions.values()}
        # Composed once here, so that each link is compared with every folder as plain text.
        folders = [(t, same_name(research_folder(t))) for t in topics] + [
            (t, same_name(history_folder(t))) for t in topics
        ]
        found: dict[str, list[LinkIn]] = {}
        for doc in self.repo.documents:
            if doc.problem:
                self.issues.append((doc.path, "unreadable", doc.problem))
                self.unreadable_documents[doc.path] = ("unreadable", doc.problem)
                continue
            blob = self.blob_ids.get(doc.path)
            key = (doc.path, blob) if blob is not None and self.link_cache is not None else None
            if key is not None and self.link_cache is not None and key in self.link_cache:
                links = self.link_cache[key]
            else:
                try:
                    data = self.read(doc.path)
                    if NUL in data:  # never cached: read again, and noted again, each time
                        raise ReadError("binary", NOT_TEXT)
                    # Cached per blob across commits, whichever sessions each commit touched.
                    scope = topics if key is None else None
                    links = _resolved_links(doc.path, data, scope, self.root_names)
                except ReadError as err:
                    self.issues.append((doc.path, err.code, err.message))
                    self.unreadable_documents[doc.path] = (err.code, err.message)
                    continue
                if key is not None and self.link_cache is not None:
                    self.link_cache[key] = links
            for line, kind, target, resolved in links:
                path = same_name(resolved)
                for topic, folder in folders:
                    if path == folder or path.startswith(folder + "/"):
                        found.setdefault(topic, []).append(
                            LinkIn(doc.path, line, kind, target, resolved)
                        )
        return found


def folder_names(path: str) -> tuple[str, ...]:
    """The names of a folder on disk and of the folders it sits in, outermost first (as the
    disk resolves `..` from it: through symbolic links to where it really is)."""
    return tuple(name for name in os.path.realpath(path).split(os.sep) if name)


def _resolved_links(
    document: str, data: bytes, topics: set[str] | None, root: tuple[str, ...]
) -> list[tuple[int, str, str, str]]:
    """(line, kind, target, repository path) of a document's links to repository paths.

    With topics, only a document that could link into one of their folders is parsed; with
    None, any document that names a brainstorm folder at all (or escapes text) or lies under
    docs/history/brainstorms/.
    """
    if topics is not None and not _may_link_into(document, data, topics):
        return []
    # The name in any case, as the folders are compared (is_inside): `Brainstorms/` in a link
    # is a link into one (until READER 207 a commit's copy of such a document was not parsed,
    # and its harvested session passed where the working tree's failed; found by a hunt).
    named = b"brainstorm" in data.lower() or b"%" in data or b"&#" in data
    if topics is None and not named and not document.startswith(HISTORY_FOLDERS):
        return []
    return _parsed_links(document, data, root)


def _parsed_links(
    document: str, data: bytes, root: tuple[str, ...]
) -> list[tuple[int, str, str, str]]:
    """(line, kind, target, repository path) of every link of a document, parsed whatever it
    names (a file of the session itself links into it with `forks.md` alone)."""
    if data.startswith(BOM):
        data = data[len(BOM) :]  # else a reference on the first line is no definition
    text = data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
    links = []
    try:
        found = extract_links(text)
    except TooDeep as err:
        raise ReadError("too-deep", str(err)) from None
    for line, kind, target in found:
        resolved = resolve(document, target, root)
        if resolved is not None:
            links.append((line, kind, target, resolved))
    return links


def _may_link_into(document: str, data: bytes, topics: set[str]) -> bool:
    """Whether a document could hold a link into one of the topics' session folders.

    Such a link names `{topic}-brainstorm` or `brainstorms/{topic}` (only a document under
    docs/history/brainstorms/ can say just `{topic}`: `demo/` beside the folders, `../demo/`
    from another harvested session), unless its text is escaped (`%`, or a character
    reference); every other document needs no Markdown parse.
    """
    if b"%" in data or _REFERENCE_RE.search(data):
        return True
    if b"\\" in data:
        # A backslash escape is no part of the link's target (`pagination\-brainstorm`).
        data = data.replace(b"\\", b"")
    in_history = document.startswith(HISTORY_FOLDERS)
    # Names as the disk compares them: in any case (one copy of the text, lowered in C) and,
    # for a name that is not ASCII in a document that is not, in either Unicode form.
    low = data.lower()
    history_ok = b"brainstorms/" in low
    folded: bytes | None = None
    plain = data.isascii()
    for topic in topics:
        name, within = _folded_name(topic), low
        if name not in low:
            if plain or topic.isascii():
                continue
            if folded is None:
                folded = _folded_bytes(data)
                # Nothing but ASCII case to fold: the search of `low` said it already.
                folded = low if folded == low else folded
            if folded is low or name not in folded:
                continue
            within = folded
        if in_history or name + b"-brainstorm" in within or history_ok:
            return True
    return False


@cache
def _folded_name(topic: str) -> bytes:
    """A topic's name as a disk blind to case and Unicode forms compares it, as UTF-8 bytes:
    once per topic, not once per document."""
    return same_name(topic).encode("utf-8", "surrogateescape")


def _folded_bytes(data: bytes) -> bytes:
    """UTF-8 text as a disk blind to case and Unicode forms compares it (as same_name, not
    remembered: a document is read once); bytes that are no UTF-8 are kept as they are."""
    text = unicodedata.normalize("NFC", data.decode("utf-8", "surrogateescape"))
    return unicodedata.normalize("NFC", text.casefold()).encode("utf-8", "surrogateescape")


# The problem of a file a commit holds as a symbolic link (git stores the target's path).
COMMITTED_LINK = "a symbolic link in the commit; not followed"

# git (2.32 and later) does not read a .gitignore that is a symbolic link, so it ignores nothing.
GITIGNORE_LINK = "a symbolic link, which git does not read as a .gitignore: ops/ is not ignored"


def _add_git_facts(ctx: RepoContext, inp: SessionInput, session: SessionRef) -> None:
    """What git says of the session's files (BS-OPS-02), and why it could not say it."""
    inp.tracked = ctx.tracked(session)
    if inp.tracked is None and ctx.unread_git is not None:
        git = ctx.unread_git
        inp.git_problem = (
            f"git could not list the files it tracks in {git.path} ({git.failure}): "
            "whether an ops/ file is tracked is unknown"
        )
    inp.git_problem = inp.git_problem or ctx.nested_history_problem.get(session.path)
    inp.history_problem = ctx.history_problem or ctx.session_history_problem.get(session.path, "")
    inp.from_commit = ctx.index_free
    inp.tracked_history = sorted(ctx.tracked_history.get(session.path, []))


def _nested_ops(
    repo: GitRepo, folder: str, lead: str, session: SessionRef
) -> list[tuple[str, str]] | None:
    """(ops/ file relative to the session folder, first commit that tracked it) in the history
    of a nested working tree; None when git cannot walk it. A tree inside ops/ holds only ops/
    files. One above the session folder (docs/ a clone) is asked for the session's folder in
    both locations: an ops/ file committed before the move to history stays in its history
    (spec §5), as the repository's own history finds it by topic."""
    if lead:
        found = repo.first_changes(folder)
        return None if found is None else [(lead + name, sha) for name, sha in found]
    top = session.path[: -len(folder)].rstrip("/") if folder else session.path
    places = [folder]
    for other in (research_folder(session.topic), history_folder(session.topic)):
        inside = other[len(top) + 1 :] if session.topic and other.startswith(top + "/") else ""
        if inside and inside not in places:
            places.append(inside)
    ops: list[tuple[str, str]] = []
    for place in places:
        # The whole folder, not a pathspec `ops`: `Ops/` is ops/ too.
        found = repo.first_changes(place)
        if found is None:
            return None
        ops.extend((n, sha) for n, sha in found if "/" in n and is_ops(n.split("/")[0]))
    return ops


# The code and message of a file where a rule folder should be.
NOT_A_FOLDER = ("not-a-folder", "a file, not a folder")


def _in_ops_layer(top: str, below: str, entry: Entry) -> bool:
    """Whether an entry is (or is in) the session's ops layer, for CENSUS-LOC-01: `Ops/` too,
    and an ops entry not read (a link out of the root, to nothing, in an archive), taken for a
    folder as what it is is unknown (fail closed; until READER 177 it passed CENSUS-LOC-01
    where a link inside the root failed it; found by a hunt)."""
    return is_ops(top) and bool(below or entry.is_dir or entry.problem is not None)


def session_input(ctx: RepoContext, session: SessionRef) -> SessionInput:
    inp = SessionInput(session.location, session.topic, session.path)
    inp.root_names = ctx.root_names
    inp.twins = ctx.twins(session)
    inp.other_place = ctx.other_place(session)
    if ctx.repo.incomplete:
        # Files of the session may be missing from the listing itself: the whole folder ('.')
        # is in doubt, so its rules fail instead of passing on what happened to be read.
        inp.unreadable.append((".", "archive-incomplete", ctx.repo.incomplete))
    for entry in session.entries:
        top, _, below = entry.path.partition("/")
        if _in_ops_layer(top, below, entry):
            inp.has_ops_dir = True
        if entry.path in RULE_FOLDERS and not entry.is_dir:
            # A file named ops where the folder should be: every rule reading ops/ fails. A link
            # not followed (out of the root, to nothing) is no file: its own problem says why.
            why = ("unreadable", entry.problem) if entry.problem else NOT_A_FOLDER
            inp.unreadable.append((entry.path + "/", *why))
            continue
        if is_unlisted(entry):
            # A folder that could not be listed ('.': the session's own): its files are
            # unknown, so every rule reading one fails (spec §3.1).
            where = "." if entry.path == "." else entry.path + "/"
            code = "vanished" if entry.problem == FOLDER_VANISHED else "unreadable"
            message = str(entry.problem)
            if top in RULE_FOLDERS and below:
                # A folder inside fragments/ (or ops/) hides files the rules read there: the
                # issue is the rule folder's, naming the one not entered.
                where, message = top + "/", f"{entry.path}/: {message}"
            inp.unreadable.append((where, code, message))
            continue
        if entry.is_dir:
            if entry.path in EXISTS_FLAGS:
                # A folder named forks.md is no forks.md: say so, and fail its rule (§3.1).
                inp.unreadable.append((entry.path, "not-a-file", "a directory, not a file"))
            elif entry.problem and entry.path in RULE_FOLDERS:
                # A folder the rules read that was not entered (a link to elsewhere in the
                # repository): its files are unknown, so every rule reading one fails.
                inp.unreadable.append((entry.path + "/", "unreadable", entry.problem))
            continue
        inp.sizes[entry.path] = entry.size
        problem = entry.problem
        if entry.link and entry.path == "ops/.gitignore":
            problem = GITIGNORE_LINK
        if problem:
            code = "vanished" if problem == VANISHED else "unreadable"
            inp.unreadable.append((entry.path, code, problem))
            continue
        try:
            inp.files[entry.path] = ctx.read(f"{session.path}/{entry.path}")
        except ReadError as err:
            inp.unreadable.append((entry.path, err.code, err.message))
    _add_git_facts(ctx, inp, session)
    inp.links = ctx.links_into(session.topic)
    manifest = inp.files.get("ops/manifest.md")
    misnamed: list[tuple[str, str, str]] = []
    if manifest is not None:
        misnamed = _add_destinations(ctx, inp, session, manifest)
    inp.unreadable_documents = _unread_destinations(ctx, inp) + misnamed
    return inp


def _add_destinations(
    ctx: RepoContext, inp: SessionInput, session: SessionRef, manifest: bytes
) -> list[tuple[str, str, str]]:
    """The manifest's destinations that exist, and the links of those inside a session
    folder, this session's own included (no repository document, so read here); returns the
    destinations not read: those that exist only in another case, and those under a folder
    the walk did not see into."""
    named = manifest_destinations(manifest, session.path, ctx.root_names)
    files = ctx.repo.files
    not_files = [d for d in named if d not in files]
    # Folders and patterns: each reaches the documents in it or matching it.
    reaching = _folders_named(files, not_files) | _globs_matching(files, not_files)
    inp.existing_destinations = frozenset(d for d in named if d in files or d in reaching)
    missing = [d for d in named if d not in inp.existing_destinations]
    unread = _misnamed_destinations(ctx, missing) + _behind_unseen(ctx, missing)
    # Only files inside a session folder: one beside them (docs/history/brainstorms/README.md)
    # is a repository document, whose links the scan has read already. A row routed into the
    # session's own thesis.md is a destination like any other (its links were never read).
    documents = [d for d in inp.existing_destinations if d in files]
    if reaching:
        documents += [f for f in files if is_destination(f, reaching)]
    inside = sorted(
        d for d in documents if is_markdown(d) and sessions_holding(d.split("/"), is_dir=False)
    )
    if inside:
        inp.links = [*inp.links, *ctx.links_in_sessions(inside, session.topic)]
    return unread


def _folders_named(files: set[str], missing: list[str]) -> frozenset[str]:
    """The destinations not files that are folders of the repository (`docs/architecture/`):
    a harvest routed there wrote the documents in it, each of which may link into the
    session folder, so each is a destination (until 2026-12-07 such a row named nothing that
    existed, and BS-HARVEST-01 passed over a link in them)."""
    prefixes = {f"{d}/" for d in missing if d}
    if not prefixes:
        return frozenset()
    return frozenset(p[:-1] for p in prefixes if any(f.startswith(p) for f in files))


def _globs_matching(files: set[str], missing: list[str]) -> frozenset[str]:
    """The destinations written as a pattern (`docs/features/*.md`) that match a file of the
    repository: each file they match is a destination, as BS-HARVEST-01's `GLOB` reads it
    (until 2026-12-07 the pattern named no file, and a link in them passed, found by a hunt)."""
    patterns = [d for d in missing if "*" in d]
    return frozenset(p for p in patterns if any(fnmatchcase(f, p) for f in files))


def is_destination(path: str, destinations: frozenset[str]) -> bool:
    """Whether a repository path is one of the destinations, lies in one that is a folder, or
    matches one written as a pattern."""
    if path in destinations:
        return True
    parts = path.split("/")
    if any("/".join(parts[:i]) in destinations for i in range(1, len(parts))):
        return True
    return any(fnmatchcase(path, d) for d in destinations if "*" in d)


def _behind_unseen(ctx: RepoContext, missing: list[str]) -> list[tuple[str, str, str]]:
    """Destinations missing from the walk that lie under a folder it did not see into (one it
    could not list, a symbolic link it does not follow): for the repository's readers the
    document may well exist and link into the session, so it is a document not read, and
    BS-HARVEST-01 fails (fail closed). They passed as not created yet (found by a hunt)."""
    found = []
    for written in sorted(set(missing)):
        parts = written.split("/")
        folder = next(
            (f for i in range(1, len(parts)) if (f := "/".join(parts[:i])) in ctx.repo.unseen),
            None,
        )
        if folder is not None:
            why = ctx.repo.unseen[folder]
            message = f"it lies under '{folder}', which is not read ({why})"
            found.append((written, "unreadable", message))
    return found


def _misnamed_destinations(ctx: RepoContext, missing: list[str]) -> list[tuple[str, str, str]]:
    """Destination documents missing under their name but present in another case
    (`docs/Features/Demo.md` for docs/features/demo.md) or Unicode form (café typed composed,
    written decomposed by macOS): on the disk where the harvest was applied that is the
    document, whose links the rule cannot show were checked, so it fails, as a misnamed
    session file does (docs/errors.md, `misnamed-file`)."""
    wanted = {_same_name(d): d for d in missing if is_markdown(d)}
    # A path written without its extension (`docs/features/demo` for demo.md): until
    # 2026-12-07 it named nothing that existed, and the rule passed unread (found by a hunt).
    for d in missing:
        # A word alone (`README: new`) is no path to complete: the manifest's reading notes it.
        if "/" in d and "." not in d.rsplit("/", 1)[-1]:
            wanted.update((_same_name(d + suffix), d) for suffix in MARKDOWN_SUFFIXES)
    if not wanted:
        return []
    on_disk: dict[str, str] = {}
    for path in ctx.repo.files:
        key = _same_name(path)
        if key in wanted and (key not in on_disk or path < on_disk[key]):
            on_disk[key] = path
    found = []
    for key, path in sorted(on_disk.items()):
        written = wanted[key]
        # Two spellings of one name look alike on a terminal: the line says which differs.
        if _same_name(written) != _same_name(path):
            differs, why = "it lacks the extension", ""
        else:
            differs = "its Unicode form" if composed(written) == composed(path) else "its case"
            differs += " differs"
            why = " (a case-insensitive disk, or one blind to Unicode forms, would write there)"
        message = (
            f"'{written}' does not exist, but '{path}' does ({differs}): meant as it{why}, "
            "but paths are read exactly: write the name as on disk"
        )
        found.append((written, "misnamed-destination", message))
    return found


def _same_name(path: str) -> str:
    """A path as a disk blind to case and to Unicode forms compares it."""
    return composed(path).casefold()


def _unread_destinations(ctx: RepoContext, inp: SessionInput) -> list[tuple[str, str, str]]:
    """The documents BS-HARVEST-01 reads for this session that could not be read: a
    research session's manifest destinations; for a harvested one, every document outside
    docs/research/ and docs/history/. A link into the folder may hide in any of them."""
    if inp.location == "research":
        destinations = inp.existing_destinations
        chosen = [d for d in ctx.unreadable_documents if is_destination(d, destinations)]
    else:
        chosen = [
            d
            for d in ctx.unreadable_documents
            if not d.startswith(("docs/research/", "docs/history/"))
        ]
    return [(d, *ctx.unreadable_documents[d]) for d in sorted(chosen)]


def manifest_destinations(data: bytes, folder: str, root: tuple[str, ...] = ()) -> list[str]:
    from pipeline.parse.lexical import decode

    scratch = Records("")
    parse_manifest(decode(data, "ops/manifest.md", scratch), scratch, folder=folder, root=root)
    rows = scratch.of("manifest_destinations")
    return [r["destination_path"] for r in rows if r["destination_path"]]


def destination_stamps(ctx: RepoContext) -> str:
    """The metadata of the session files a manifest of the repository may name as a
    Destination (its folder's name and the file's path in it appear in the manifest's text,
    or a folder or pattern Destination reaches them): a session's snapshot reads their links,
    so a change to one is a change to it too."""
    manifests = []
    for session in ctx.repo.sessions.values():
        if any(e.path == "ops/manifest.md" for e in session.entries):
            with contextlib.suppress(ReadError):  # read again, and noted, with its session
                manifests.append((session.path, ctx.read(f"{session.path}/ops/manifest.md")))
    if not manifests:
        return ""
    # A Destination names its path as a link may (`notes%20a.md`, `b%2Dbrainstorm`,
    # `notes\_a.md`): the folder's name is looked for in the text so unescaped too, and then
    # every document of that folder counts (more than are named, never fewer).
    raw = [data for _, data in manifests]
    texts = [*raw, *(unquote_to_bytes(data).replace(b"\\", b"") for data in raw)]
    reached = _reached_sessions(ctx, manifests)
    named = []
    for session in ctx.repo.sessions.values():
        name = posixpath.basename(session.path).encode("utf-8", "surrogateescape")
        if session.path not in reached and not any(name in text for text in texts):
            continue
        for e in session.entries:
            if is_markdown(e.path):
                named.append(f"{session.path}/{e.path}\0{e.stamp}")
    return "\n".join(named)


# Where a Destination may reach session folders without naming one: a pattern, a character
# reference, or a folder above them (`docs/research/`, `docs/`, `../..` from ops/) written
# last in its path.
_REACHING_RE = re.compile(
    rb"\*|&(?:#|[A-Za-z][A-Za-z0-9]{1,31};)"
    rb"|(?<![\w.-])(?i:docs|research|history|brainstorms|\.\.)[/\\]?(?![\w.%/\\-])"
)


def _reached_sessions(ctx: RepoContext, manifests: list[tuple[str, bytes]]) -> set[str]:
    """The session folders holding a document that a Destination reaches without its text
    naming the folder (`docs/research/`, `docs/research/*/notes.md`, `other&#45;brainstorm`):
    such a manifest is read as the rule reads it, the others are not read at all (found by a
    hunt: a rerun kept a pass after a document so reached began to link into the session)."""
    reaching = [
        d
        for folder, data in manifests
        if _REACHING_RE.search(data) or _REACHING_RE.search(unquote_to_bytes(data))
        for d in manifest_destinations(data, folder, ctx.root_names)
    ]
    if not reaching:
        return set()
    found = set()
    for session in ctx.repo.sessions.values():
        paths = [f"{session.path}/{e.path}" for e in session.entries]
        for d in reaching:
            inside = is_inside(session.path, d) or is_inside(d, session.path)
            if inside or ("*" in d and any(fnmatchcase(p, d) for p in paths)):
                found.add(session.path)
                break
    return found


def repo_signature(ctx: RepoContext) -> str:
    """File metadata that, unchanged, means no session of the repository changed either."""
    h = hashlib.sha256()
    if ctx.repo.incomplete:
        # The same listing from an archive now read only in part is not the same repository.
        h.update(f"incomplete\0{ctx.repo.incomplete}\n".encode())
    for path in sorted(ctx.repo.files):
        h.update(path.encode("utf-8", "surrogateescape") + b"\0")
    # The session folders too: an empty one holds no file, yet makes another session's
    # folder a twin or one in two places (found by a hunt: its coming and going was unseen).
    for folder in sorted(ctx.repo.sessions):
        h.update(b"session\0" + folder.encode("utf-8", "surrogateescape") + b"\0")
    for doc in ctx.repo.documents:
        h.update(f"{doc.path}\0{doc.stamp}\n".encode("utf-8", "surrogateescape"))
    if ctx.git is not None:
        h.update(index_stamp(ctx.git.path).encode())
    return h.hexdigest()


def index_stamp(top: str) -> str:
    """The metadata of a working tree's index, which moves when what it tracks does."""
    try:
        st = os.stat(git_index(top))
        return f"index\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"
    except OSError:
        return "index\0none"


def nested_index_stamps(ctx: RepoContext, session: SessionRef) -> str:
    """The index metadata of the working trees nested in the repository that hold the
    session's files (staging in a submodule changes what it tracks, not the repository's)."""
    trees = ctx.session_trees(session)[1 if ctx.git is not None else 0 :]
    return "".join(f"/{repo.path}\0{index_stamp(repo.path)}" for repo, _, _ in trees)


def shallow_boundary(top: str) -> str:
    """A digest of a shallow clone's boundary commits (`.git/shallow`); '' for a full clone."""
    try:
        with open(os.path.join(os.path.dirname(git_index(top)), "shallow"), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return ""


def session_signature(repo_sig: str, session: SessionRef) -> str:
    h = hashlib.sha256(repo_sig.encode())
    for e in session.entries:
        h.update(
            f"{e.path}\0{e.is_dir}\0{e.stamp}\0{e.problem}\0{e.link}\n".encode(
                "utf-8", "surrogateescape"
            )
        )
    return h.hexdigest()[:32]


@dataclass
class History:
    """What a repository's git history says of its sessions, by topic."""

    # Topic → the commits at HEAD that last changed the session (parents of its working tree).
    at_head: dict[str, list[str]] = field(default_factory=dict)
    # Topic → (ops/ file relative to the session, first commit that tracked it).
    ops_tracked: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    # Commits that changed a session, oldest first: (commit, time, {topic: parent commits}).
    nodes: list[tuple[str, int, dict[str, list[str]]]] = field(default_factory=list)


def read_history(ctx: RepoContext) -> History:
    """The session lineage of a repository's history, from one `git log` (no file read).

    A commit's parents for a topic are the nearest commits along git ancestry (through
    merges) that changed that topic's folder. A commit that deleted the folder is a parent
    with no snapshot, so the line ends there (a topic reused later starts a new one).
    """
    found = History()
    latest: dict[str, dict[str, tuple[str, ...]]] = {}
    tip: dict[str, tuple[str, ...]] = {}
    for commit in ctx.history().dag(ctx.git_prefix):
        merged: dict[str, tuple[str, ...]] = {}
        for parent in commit.parents:
            for topic, commits in latest.get(parent, {}).items():
                merged[topic] = tuple(dict.fromkeys(merged.get(topic, ()) + commits))
        node: dict[str, list[str]] = {}
        for topic in _touched_topics(commit.changed, found.ops_tracked, commit.sha):
            node[topic] = list(merged.get(topic, ()))
            merged[topic] = (commit.sha,)
        latest[commit.sha] = merged
        tip = merged
        if node:
            found.nodes.append((commit.sha, commit.time, node))
    found.at_head = {topic: list(commits) for topic, commits in tip.items() if commits}
    return found


def _touched_topics(changed: set[str], ops: dict[str, list[tuple[str, str]]], sha: str) -> set[str]:
    """Topics whose session folder a commit changed; records the ops/ files it tracked first."""
    topics: set[str] = set()
    for path in changed:
        parts = path.split("/")
        match = match_session(parts)
        if match is None or match[0] != 0:
            continue
        topic = match[2]
        topics.add(topic)
        inner = parts[match[1] :]
        if len(inner) > 1 and is_ops(inner[0]):
            known = ops.setdefault(topic, [])
            relative = "/".join(inner)
            if all(f != relative for f, _ in known):
                known.append((relative, sha))
    return topics


def walk_history(
    ctx: RepoContext, history: History, wanted: Callable[[str, str], bool]
) -> Iterator[tuple[str, int, list[str], RepoContext, SessionRef]]:
    """(commit, time, parent commits, that commit's context, session) for each commit node of
    `history` that `wanted(topic, commit)` asks for; nothing else is read from git."""
    git_history = ctx.history()
    prefix = ctx.git_prefix
    link_cache: dict[tuple[str, str], list[tuple[int, str, str, str]]] = {}
    for commit, when, node in history.nodes:
        topics = {t for t in node if wanted(t, commit)}
        if not topics:
            continue
        tree = git_history.tree(commit, prefix)
        if git_history.failure:
            # A commit git could not list ends the walk: the commits after it would be stored
            # with a parent that has no snapshot; the caller says the history incomplete.
            return
        blobs = {path: (sha, size) for path, sha, size, _ in tree}
        # A link committed in place of a file: its blob is a path, never the file's text.
        links = {path: COMMITTED_LINK for path, _, _, link in tree if link}
        repo = RepoRef(ctx.repo.path, has_git=True)
        repo.files = set(blobs)
        for topic in sorted(topics):
            for folder, location in (
                (research_folder(topic), "research"),
                (history_folder(topic), "history"),
            ):
                entries = [
                    Entry(path[len(folder) + 1 :], False, size, 0, links.get(path))
                    for path, (sha, size) in blobs.items()
                    if path.startswith(folder + "/")
                ]
                if entries:
                    repo.sessions[folder] = SessionRef(
                        ctx.repo.path, folder, topic, location, entries
                    )
        session_prefixes = tuple(f + "/" for f in repo.sessions)
        repo.documents = [
            Entry(path, False, size, 0, links.get(path))
            for path, (sha, size) in sorted(blobs.items())
            if is_markdown(path) and not path.startswith(session_prefixes)
        ]
        past = RepoContext(repo, _blob_reader(git_history, blobs), git=ctx.git, index_free=True)
        past.blob_ids = {path: sha for path, (sha, _) in blobs.items()}
        past.link_cache = link_cache
        past.root_names = ctx.root_names
        for folder, session in repo.sessions.items():
            past.tracked_history[folder] = [(e.path, commit) for e in session.entries]
        for session in repo.sessions.values():
            yield commit, when, node[session.topic], past, session


def _blob_reader(history: GitHistory, blobs: dict[str, tuple[str, int]]) -> Reader:
    def read(path: str) -> bytes:
        if path not in blobs:
            raise ReadError("vanished", "not in this commit")
        sha, size = blobs[path]
        if size > MAX_FILE_BYTES:
            raise ReadError("too-large", f"file is {size} bytes, over the 8 MiB limit; not read")
        return history.blob(sha)

    return read
