"""One session folder, read whole: the inputs the rules see, its snapshot id, and its rows."""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pipeline.parse import READER_VERSION
from pipeline.parse.capture import parse_capture
from pipeline.parse.forks import parse_forks
from pipeline.parse.ledger import parse_ledger
from pipeline.parse.lexical import MARKDOWN_SUFFIXES, decode
from pipeline.parse.manifest import parse_manifest
from pipeline.parse.records import Records
from pipeline.parse.state import parse_state
from pipeline.parse.synclog import parse_sync_log
from pipeline.parse.thesis import parse_thesis
from pipeline.vocabulary import stage_of

# (session-relative file, reader) in the order they are read.
_READERS: list[tuple[str, Callable[[list[str], Records], None]]] = [
    ("state.md", parse_state),
    ("thesis.md", parse_thesis),
    ("forks.md", parse_forks),
    ("ledger.md", parse_ledger),
    ("ops/capture.md", parse_capture),
    ("ops/sync-log.md", parse_sync_log),
]
# The files the readers read as text; basis/ and fragments/ are only listed.
# The rules that compare a session's history (each has a queries/series/ file): an unread
# history fails them.
SERIES_RULES = ("BS-FORK-01", "BS-LEDGER-01", "BS-STATE-01")
_READ = (*(name for name, _ in _READERS), "ops/manifest.md")
# Session subfolders whose files rules read (`ops/` covers ops/capture.md in a rule's reads).
RULE_FOLDERS = ("ops", "fragments")


def is_ops(name: str) -> bool:
    """Whether a session's top-level folder name is its ops/ as git and BS-OPS-02 see it:
    `Ops/` is ops/ on the case-insensitive disk it was written on."""
    return name.lower() == "ops"


EXISTS_FLAGS = {
    "state.md": "state_exists",
    "thesis.md": "thesis_exists",
    "forks.md": "forks_exists",
    "ledger.md": "ledger_exists",
    "ops/.gitignore": "gitignore_exists",
    "ops/capture.md": "capture_exists",
    "ops/sync-log.md": "sync_log_exists",
    "ops/manifest.md": "manifest_exists",
}
# The rule that fails when a file exists but cannot be read, where the rule's own check
# would otherwise see an empty file and pass (state.md, thesis.md and ops/.gitignore
# fail their rules already: their fields stay null).
UNREADABLE_RULE = {
    "forks.md": "BS-FORK-01",
    "ledger.md": "BS-LEDGER-01",
    "ops/capture.md": "BS-COMPOSE-02",
    "ops/sync-log.md": "BS-SYNC-01",
    "ops/manifest.md": "BS-MANIFEST-01",
}


@dataclass
class LinkIn:
    """A link in another document of the repository that resolves into this session."""

    file: str
    line: int
    kind: str
    target: str
    resolved: str


@dataclass
class SessionInput:
    """Everything the rules read for one session, gathered from a source tree."""

    location: str
    topic: str
    path: str
    files: dict[str, bytes] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    # Files that exist but could not be read: (file, code, message).
    unreadable: list[tuple[str, str, str]] = field(default_factory=list)
    has_ops_dir: bool = False
    # Session-relative paths git tracks; None when there is no git context.
    tracked: list[str] | None = None
    # Why git could not list what it tracks, in a git working tree (git missing, a damaged
    # index): BS-OPS-02 then fails rather than being skipped as "no git context".
    git_problem: str | None = None
    history_problem: str = ""  # git could not walk the history (with --git-history)
    # (session-relative path, commit) that a commit tracked, with --git-history.
    tracked_history: list[tuple[str, str]] = field(default_factory=list)
    links: list[LinkIn] = field(default_factory=list)
    existing_destinations: frozenset[str] = frozenset()
    # The folders the repository root sits in: a Destination climbing out comes back in.
    root_names: tuple[str, ...] = ()
    # Documents BS-HARVEST-01 reads that could not be read: (repository path, code, message).
    unreadable_documents: list[tuple[str, str, str]] = field(default_factory=list)
    from_commit: bool = False
    # Other session folders of the repository spelling the topic in another Unicode form.
    twins: list[str] = field(default_factory=list)
    # The topic's folder in the other location of the same repository (a move half done).
    other_place: str | None = None
    # Each file's SHA-256, computed once for the snapshot id and reused for the files table.
    _digests: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def digest(self, name: str) -> str:
        found = self._digests.get(name)
        if found is None:
            found = self._digests[name] = hashlib.sha256(self.files[name]).hexdigest()
        return found

    def snapshot_id(self) -> str:
        """A hash of everything the rules read, so equal content is stored once."""
        h = hashlib.sha256()
        parts: list[str] = [f"reader={READER_VERSION}", self.location, self.topic, self.path]
        parts.append(str(self.has_ops_dir))
        parts.append(f"commit={self.from_commit}")
        for name in sorted(self.files):
            parts += ["f", name, self.digest(name)]
        for name, code, _ in sorted(self.unreadable):
            parts += ["u", name, code, str(self.sizes.get(name))]
        parts += ["t", "none" if self.tracked is None else "\x1f".join(sorted(self.tracked))]
        parts += ["g", self.git_problem or ""]
        if self.history_problem:
            parts += ["hp", self.history_problem]
        parts += ["h", *(f"{name}@{commit}" for name, commit in sorted(self.tracked_history))]
        for link in sorted(self.links, key=lambda k: (k.file, k.line, k.target)):
            parts += ["l", link.file, str(link.line), link.kind, link.target, link.resolved]
        parts += ["d", *sorted(self.existing_destinations)]
        for name, code, _ in self.unreadable_documents:
            parts += ["ud", name, code]
        parts += ["tw", *self.twins]
        if self.other_place:
            parts += ["op", self.other_place]
        h.update("\x1e".join(parts).encode("utf-8", "surrogatepass"))
        return h.hexdigest()[:32]


def parse_session(inp: SessionInput, snapshot_id: str | None = None) -> Records:
    rec = Records(snapshot_id or inp.snapshot_id())
    snap = rec.snapshot
    snap.update(location=inp.location, topic=inp.topic, path=inp.path)
    snap["git_context"] = inp.tracked is not None or inp.git_problem is not None
    if inp.git_problem is not None:
        rec.issue(".git", None, "git-unreadable", inp.git_problem, "BS-OPS-02")
    for rule_id in SERIES_RULES if inp.history_problem else ():
        # The history the series rules compare was not read: they cannot pass (fail closed).
        rec.issue(".git", None, "history-incomplete", inp.history_problem, rule_id)
    _suffixed_history(rec, inp)
    unread = [*inp.unreadable, *_misnamed(inp.files)]
    unreadable = {u[0] for u in unread}
    # The folder itself not read, or read in part ('.'): any of its files may exist.
    unknown = ("",) if "." in unreadable else tuple(n for n in unreadable if n.endswith("/"))
    snap["commit_snapshot"] = inp.from_commit
    # A history folder's rules read ops/ only to say it should be gone: none claims it there.
    snap["ops_exists"] = inp.has_ops_dir or ("." in unreadable and inp.location != "history")
    for name, flag in EXISTS_FLAGS.items():
        # A file in a folder that was not entered may exist: its rules are evaluated (and
        # fail on the folder's issue) rather than skipped as if it were missing.
        snap[flag] = name in inp.files or name in unreadable or name.startswith(unknown)
    for name, code, message in unread:
        rec.issue(name, None, code, message, UNREADABLE_RULE.get(name))
    decoded = {name: decode(inp.files[name], name, rec) for name in _READ if name in inp.files}
    for name, reader in _READERS:
        if name in decoded:
            reader(decoded[name], rec)
    if "ops/manifest.md" in decoded:
        exists = inp.existing_destinations.__contains__
        parse_manifest(decoded["ops/manifest.md"], rec, exists, inp.path, inp.root_names)
    gitignore = inp.files.get("ops/.gitignore")
    if gitignore is not None:
        snap["gitignore_star"] = _ignores_all(decode(gitignore, "ops/.gitignore", rec), rec)
    # '.' (an archive read only in part) and folders not entered (`ops/`) are issues, not files.
    folders = {name for name in unreadable if name == "." or name.endswith("/")}
    for name in sorted(inp.files.keys() | (unreadable - folders)):
        data = inp.files.get(name)
        digest = inp.digest(name)[:32] if data is not None else None
        rec.add("files", file=name, size=inp.sizes.get(name), sha256=digest)
        base = name[len("fragments/") :]
        # A dotfile (`.gitkeep`) keeps the folder in git; it is no fragment. A file in a
        # sub-folder is one (spec §3.1: the files in fragments/), named by its path there.
        if name.startswith("fragments/") and not posixpath.basename(base).startswith("."):
            rec.add("fragments", file=name, name=base.rsplit(".", 1)[0])
    for tracked in inp.tracked or []:
        rec.add("tracked_files", file=tracked, commit=None)
    for tracked, commit in inp.tracked_history:
        rec.add("tracked_files", file=tracked, commit=commit)
    _add_links(rec, inp)
    _twin_folders(rec, inp)
    _two_places(rec, inp)
    _unread_documents(rec, inp)
    _contradicted_compose(rec)
    _summarise(rec, inp)
    return rec


def _ignores_all(lines: list[str], rec: Records) -> bool:
    """Whether ops/.gitignore has its `*` line (spaces only trimmed, §5: git reads `*` and a
    tab, or a no-break space, as another pattern). A `!` line after the last `*` takes part of
    ops/ back into git, as git's last matching pattern wins: BS-OPS-01 fails on its line
    rather than passing on the `*` alone (found by a hunt)."""
    stars = [at for at, line in enumerate(lines) if line.strip(" ") == "*"]
    for at in range(stars[-1] + 1 if stars else len(lines), len(lines)):
        if lines[at].startswith("!"):
            message = (
                f"'{lines[at].strip()[:60]}' after the '*' line lets git track that part of "
                "ops/ again; ops/ never enters git, so remove it"
            )
            rec.issue("ops/.gitignore", at + 1, "gitignore-negation", message, "BS-OPS-01")
    return bool(stars)


def _add_links(rec: Records, inp: SessionInput) -> None:
    for link in inp.links:
        rec.add(
            "links",
            file=link.file,
            line=link.line,
            kind=link.kind,
            target=link.target,
            resolved=link.resolved,
        )


def _twin_folders(rec: Records, inp: SessionInput) -> None:
    """Another folder spelling the topic in another Unicode form is the same session (one
    session key), of which only one stands for it at a point: the other's failures would go
    unseen, and on a disk blind to Unicode forms the two are one folder, so the layout fails."""
    for twin in inp.twins:
        message = (
            f"/{twin} names the same topic in another Unicode form (one folder on a disk blind "
            "to Unicode forms, such as macOS): the two are one session; merge them into one"
        )
        rec.issue(".", None, "twin-folder", message, "CENSUS-LOC-01")


def _two_places(rec: Records, inp: SessionInput) -> None:
    """The topic under docs/research/ and docs/history/brainstorms/ at once (a move half done):
    one session in two places, of which the research folder stands for it, so the history
    copy's failures went unseen (found by a hunt). The layout disagrees with the lifecycle."""
    if inp.other_place is None:
        return
    stands = ", which the research folder stands for" if inp.location == "history" else ""
    message = (
        f"the topic is also at /{inp.other_place} (a move half done): one session in two "
        f"places{stands}; finish the move (remove the research folder once the history "
        "folder holds all of it)"
    )
    rec.issue(".", None, "two-places", message, "CENSUS-LOC-01")


def _suffixed_history(rec: Records, inp: SessionInput) -> None:
    """A history folder that kept its research name (`git mv docs/research/x-brainstorm
    docs/history/brainstorms/`): spec §2 makes its topic the folder name, `x-brainstorm`, so it
    is another session than the research folder it came from, whose move is then never seen
    and whose forks, in a half-done move, count twice; said, so the numbers are not trusted
    unsaid (spec §2 is kept: the topic is the folder name)."""
    name = posixpath.basename(inp.path)
    if inp.location == "history" and name.endswith("-brainstorm"):
        topic = name.removesuffix("-brainstorm")
        message = (
            f"history folder keeps the research suffix -brainstorm: the move names "
            f"docs/history/brainstorms/{{topic}}/, so this is topic '{name}', another session "
            f"than docs/research/{name}/; rename it to docs/history/brainstorms/{topic}/"
        )
        rec.issue(".", None, "misnamed-folder", message)


def _capture_times(rec: Records) -> list[datetime]:
    """The times the capture holds something at: its turns', and those of the headings with a
    timestamp and no T# (capture.py puts them in the snapshot's `stamped_times`)."""
    turns: list[datetime] = [t["at"] for t in rec.of("turns") if t["at"] is not None]
    return turns + list(rec.snapshot.get("stamped_times", []))


def _contradicted_compose(rec: Records) -> None:
    """A `Last compose:` that was not read (a second one that says otherwise, a heading, a
    table row, a sub-item, …: BS-COMPOSE-01 fails on it); when the one read is later than
    the newest capture turn and the unread one is not, freshness cannot be shown either, so
    BS-COMPOSE-02 fails too (spec §3.1, fail closed)."""
    turns = _capture_times(rec)
    first = rec.snapshot.get("last_compose")
    if not turns or first is None or first <= max(turns):
        return  # no turns to be fresh against, or the rule fails on the read one already
    for line, value, instant, code in rec.snapshot.get("other_last_compose", []):
        if instant is None or instant <= max(turns):
            message = (
                f"Last compose '{rec.snapshot['last_compose_raw'][:60]}' is contradicted by "
                f"'Last compose: {value[:60]}', which is not read and is not later than the "
                "newest capture turn"
            )
            rec.issue("state.md", line, code, message, "BS-COMPOSE-02")


def _spelling(name: str) -> str:
    """A file name as a writer may misspell a session file's: in any case, with `_`, a space
    or nothing for its `-`, another Markdown or text extension or none (`ops/sync_log.md`,
    `ops/capture.markdown`, `Forks.txt`, `ops/sync-log`), and in the singular or the plural
    (`fork.md`, `ledgers.md`: a trailing `s` of each part of the name does not count). A
    dot-file has no extension to leave out (`ops/.gitignore`). So are a name saved twice over
    (`forks.md.txt`, `forks.md.md`, `forks.md ` with a space after it) and a copy a desktop
    made (`forks (1).md`, `forks copy.md`, `Copy of forks.md`): until 2026-12-07 these
    vanished, found by a hunt."""
    stem, ext = posixpath.splitext(name.lower().strip())
    ext = ext.strip()
    other = ext in _TEXT_SUFFIXES
    while other and posixpath.splitext(stem)[1].strip() in _TEXT_SUFFIXES:
        stem = posixpath.splitext(stem)[0]
    if other or (not ext and not posixpath.basename(stem).startswith(".")):
        ext = ".md"
    parts = stem.replace("_", "").replace("-", "").replace(" ", "").split("/")
    return "/".join(_COPY_RE.sub("", part).removesuffix("s") for part in parts) + ext


_TEXT_SUFFIXES = frozenset((*MARKDOWN_SUFFIXES, ".txt", ".text", ".log"))
# What a desktop adds to a copy's name, its spaces and dashes already gone.
_COPY_RE = re.compile(r"^copyof|copy(?:\d+|\(\d+\))?$|\(\d+\)$")


def _misnamed(files: Mapping[str, bytes]) -> list[tuple[str, str, str]]:
    """A session file missing under its name but present in another spelling (`Forks.md`,
    `OPS/capture.md`, `ops/sync_log.md`, `ops/capture.markdown`, `fork.md`): meant as that
    file, which the census reads by its exact name (a case-insensitive disk would read the
    first two), so it is an issue on the file it stands for and every rule that reads that
    file fails, as for a file not read (spec §3.1, fail closed).
    Likewise the folders `ops/` and `fragments/` (`Ops/`, `Fragments/`, `fragment/`)."""
    found = _case_twins(files)
    for name in EXISTS_FLAGS:
        if name not in files:
            other = next((f for f in sorted(files) if _spelling(f) == _spelling(name)), None)
            if other is None and name.startswith("ops/") and name != "ops/.gitignore":
                # An ops file beside the session's files, not in ops/ (`capture.md`); a
                # .gitignore there is the folder's own.
                alike = _spelling(name.removeprefix("ops/"))
                other = next((f for f in sorted(files) if _spelling(f) == alike), None)
            if other is not None:
                message = (
                    f"'{other}' is meant as {name}, but file names are read exactly: rename it"
                    if "/" in other or "/" not in name
                    else f"'{other}' is meant as {name}, but it is not in ops/: move it there"
                )
                found.append((name, "misnamed-file", message))
    tops = {f.split("/")[0] for f in files if "/" in f}
    for folder in RULE_FOLDERS:
        # `Fragments/x.md`: its fragments needed no manifest row, silently (found by a hunt);
        # so did `fragment/x.md`, spelt as a file's name is weighed (found by another).
        other = next((top for top in sorted(tops) if _spelling(top) == _spelling(folder)), None)
        if folder not in tops and other is not None:
            message = (
                f"'{other}/' is meant as {folder}/, but folder names are read exactly: rename it"
            )
            found.append((folder + "/", "misnamed-file", message))
    return found


def _case_twins(files: Mapping[str, bytes]) -> list[tuple[str, str, str]]:
    """A session file or folder (`forks.md`, `fragments/`) beside one named alike but for its
    case (`Forks.md`, `Fragments/`): the two are one on a case-insensitive disk, where a
    checkout keeps either, so what the session holds depends on the disk; the rules that read
    it fail (spec §3.1, fail closed) rather than pass on the one read here."""
    found = []
    for name in EXISTS_FLAGS:
        other = next((f for f in sorted(files) if f != name and f.lower() == name), None)
        if name in files and other is not None:
            message = (
                f"'{other}' beside {name}: one file on a case-insensitive disk, so which one "
                "the session holds depends on the disk; remove or rename one"
            )
            found.append((name, "misnamed-file", message))
    tops = {f.split("/")[0] for f in files if "/" in f}
    for folder in RULE_FOLDERS:
        other = next((t for t in sorted(tops) if t != folder and t.lower() == folder), None)
        if folder in tops and other is not None:
            message = (
                f"'{other}/' beside {folder}/: one folder on a case-insensitive disk, so which "
                "files the session holds depends on the disk; move its files into one"
            )
            found.append((folder + "/", "misnamed-file", message))
    return found


def _unread_documents(rec: Records, inp: SessionInput) -> None:
    """A destination document that could not be read may link into the session folder: it
    fails BS-HARVEST-01 (fail closed), research sessions' when any round names it, as the rule
    reads every round's destinations."""
    named = {row["destination_path"] for row in rec.of("manifest_destinations")}
    for name, code, message in inp.unreadable_documents:
        needed = inp.location == "history" or _destined(name, named)
        rec.issue(
            f"/{name}",
            None,
            code,
            f"destination document not read, so its links are unknown: {message}",
            "BS-HARVEST-01" if needed else None,
        )


def _destined(name: str, destinations: set[str]) -> bool:
    """Whether a destination names the document as BS-HARVEST-01 reads them: itself, a folder
    it lies in, or a pattern it matches (a document in a folder Destination that could not be
    read was a note only, and the rule passed; found by a hunt)."""
    from fnmatch import fnmatchcase

    return any(
        name == path or name.startswith(path + "/") or ("*" in path and fnmatchcase(name, path))
        for path in destinations
    )


def _summarise(rec: Records, inp: SessionInput) -> None:
    snap = rec.snapshot
    forks = rec.of("forks")
    turns = _capture_times(rec)
    syncs = [s["at"] for s in rec.of("sync_events") if s["at"] is not None]
    snap["newest_turn_at"] = max(turns, default=None)
    snap["newest_sync_at"] = max(syncs, default=None)
    candidates: list[datetime] = [
        t for t in (snap.get("last_compose"), snap["newest_turn_at"], snap["newest_sync_at"]) if t
    ]
    snap["content_time"] = max(candidates, default=None)
    # A marker that could not be read may say open: counted open, as BS-FORK-03 and the
    # lifetimes take it (fail closed), so open and parked add up to every fork.
    snap["forks_open"] = sum(1 for f in forks if f["marker"] in ("open", None))
    snap["forks_parked"] = sum(1 for f in forks if f["marker"] == "parked")
    snap["forks_total"] = len(forks)
    snap["ledger_entries"] = len(rec.of("ledger"))
    snap["turns"] = len(rec.of("turns"))
    snap["syncs"] = len({s["sync_id"] for s in rec.of("sync_events")})
    snap["files"] = len(inp.sizes)
    snap["bytes"] = sum(inp.sizes.values())
    snap["parse_issues"] = len(rec.of("parse_issues"))
    manifest = rec.of("manifests")
    snap["stage"] = stage_of(
        inp.location, snap.get("status"), manifest[0]["status"] if manifest else None
    )


def snapshot_row(rec: Records, columns: list[str]) -> dict[str, Any]:
    return {name: rec.snapshot.get(name) for name in columns}
