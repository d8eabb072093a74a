"""`census detect`: one session folder under the detector's contract, same SQL as `check`.

Kept light: no pandas or pyarrow; the folder's rows go straight into an in-memory DuckDB.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Any

from pipeline.discover import (
    RepoRef,
    SessionRef,
    discover,
    innermost_session,
    misnamed_session,
)
from pipeline.errors import UnusableInput
from pipeline.gather import RepoContext, folder_names, session_input
from pipeline.parse.links import composed
from pipeline.parse.records import Records
from pipeline.parse.session import parse_session
from pipeline.rules import results_sql, rules_for
from pipeline.schema import CONTENT_TABLES, SNAPSHOTS
from pipeline.sources.git import GitRepo, enclosing_repo
from pipeline.sources.tree import (
    BAD_NAME,
    MISNAMED_FOLDER,
    OUT_OF_ROOT,
    DirTree,
    Entry,
    ReadError,
    read_file,
    storable_name,
)
from pipeline.visible import visible

NO_LAYOUT = "no repository layout"


@dataclass
class RuleOutcome:
    rule: str
    status: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None


@dataclass
class Detection:
    path: str
    gate: str
    outcomes: list[RuleOutcome]
    location: str
    topic: str
    repo_root: str | None
    # Where the findings' files are: the session folder as its path names it, relative to
    # `base` (the repository root, or the folder's parent out of the layout), for SARIF.
    session_path: str
    base: str
    # Every parse issue of the folder ({file, line, code, message}), so that `clean`
    # never hides a line that could not be read.
    notes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def result(self) -> str:
        return "failing" if any(o.status == "fail" for o in self.outcomes) else "clean"

    def as_json(self) -> dict[str, Any]:
        rules = []
        for o in self.outcomes:
            item: dict[str, Any] = {"rule": o.rule, "status": o.status}
            if o.status == "skipped":
                item["reason"] = o.reason
            else:
                item["findings"] = o.findings
            rules.append(item)
        return {
            # Bytes of the path that are not UTF-8 show as U+FFFD, as in every row: a lone
            # surrogate escape is JSON that strict readers refuse.
            "path": _utf8(self.path),
            "gate": self.gate,
            "result": self.result,
            "rules": rules,
            "notes": self.notes,
        }


def locate(folder: str) -> tuple[str, str, str, str, bool]:
    """(location, topic, repository root, session path in it, whether the path has the layout)."""
    parts = folder.strip("/").split("/")
    found = innermost_session(parts)
    if found is not None:
        docs_at, _, topic, location = found
        return location, topic, "/" + "/".join(parts[:docs_at]), "/".join(parts[docs_at:]), True
    name = parts[-1]
    topic = name.removesuffix("-brainstorm")
    return "research", topic, os.path.dirname(folder), name, False


def require_folder(path: str) -> None:
    """Refuse a path that names no folder (exit 2), before anything else is judged by it."""
    if not path:
        # `census detect "$SESSION"` with the variable unset said ': no such directory'.
        raise UnusableInput("the session folder given is empty (an unset variable?); give one")
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise UnusableInput(f"{path}: no such directory; give a session folder") from None
    except PermissionError:
        # It may well exist: a folder on its path cannot be entered, which is no typo.
        raise UnusableInput(
            f"{path}: permission denied on a folder on its path; give a folder the user can read"
        ) from None
    except OSError as err:  # a loop of links, a name too long
        said = (err.strerror or "cannot be read").lower()
        raise UnusableInput(f"{path}: {said}; give a session folder") from None
    if not stat.S_ISDIR(mode):
        raise UnusableInput(f"{path}: not a directory; give a session folder")


def as_the_os_names(path: str) -> str:
    """The absolute path as given, its links kept, with `..` taken as the OS takes it: after
    a link it climbs from the link's target, which abspath's removal as text would not."""
    parts = path.split(os.sep)
    if ".." not in parts:
        return os.path.abspath(path)
    last = len(parts) - 1 - parts[::-1].index("..")
    climbed = os.path.realpath(os.sep.join(parts[: last + 1]) or os.sep)
    return os.path.normpath(os.path.join(climbed, *parts[last + 1 :]))


def detect(path: str | os.PathLike[str], gate: str = "session") -> Detection:
    path = os.fspath(path)  # callers in Python pass a Path; the path is read as text below
    require_folder(path)
    folder = os.path.realpath(path)
    # The location comes from the path given (spec §8), also when it is a link to a folder
    # elsewhere (the crawl reads such a session folder as it is named); else from where it is.
    given = as_the_os_names(path)
    location, topic, repo_root, session_path, in_layout = locate(given)
    if not in_layout:
        location, topic, repo_root, session_path, in_layout = locate(folder)
    # A link to a file elsewhere in the repository is followed, as the crawl follows it.
    walker = DirTree(folder, bound=repo_root if in_layout else None)
    entries = [e for e in walker.walk() if e.path]
    for where, code, message in walker.issues:
        if where == "." and code == "unreadable-dir":  # the folder itself
            raise UnusableInput(f"{path}: {message}; give a folder the user can read")
    if not_utf8(session_path):
        # A crawl does not enter a folder so named (it could not store the name) and fails
        # every rule of the session: detect reads it under the same contract. Names above the
        # repository are where the checkout lives, no part of the session (a crawl's ROOT).
        entries, walker.issues = [Entry(".", True, 0, 0, BAD_NAME)], []
    session = SessionRef("", session_path, topic, location, entries)
    repo = RepoRef("", {session_path: session})
    if in_layout and gate == "move":
        _add_repo_documents(repo, repo_root, session_path)
    ctx = RepoContext(
        repo, lambda p: read_file(os.path.join(repo_root, p), walker.bound), base=repo_root
    )
    ctx.root_names = folder_names(repo_root)
    if in_layout and gate != "move":
        _add_named_files(ctx, repo_root, session_path)
    # As in the crawl: the working tree at or above the repository root, and any nested below
    # it that holds the session's files (a submodule at docs/ or at the session folder).
    git = _git_context(repo_root)
    if git is not None:
        ctx.git, ctx.git_prefix = git
    inp = session_input(ctx, session)
    if in_layout:
        inp.twins = _twins(repo_root, topic)
        inp.other_place = _other_place(repo_root, topic, location)
    rec = parse_session(inp)
    # What the walk could not enter is shown, as crawl shows it (a link out of the folder
    # is a parse issue of the session already).
    for where, code, message in walker.issues:
        # A folder not listed in it is the session's own issue already (gather).
        if message != OUT_OF_ROOT and code != "unreadable-dir":
            rec.issue(where, None, code, message)
    if not in_layout and misnamed_session(given.strip("/").split("/")):
        # Read, as any folder out of the layout is, but said: a crawl does not take it for one.
        rec.issue(".", None, "misnamed-folder", MISNAMED_FOLDER)
    _text_only(rec)
    outcomes = _evaluate(rec, gate)
    if not in_layout:
        # Out of the layout no repository documents are read, so no link can be seen.
        for o in outcomes:
            if o.rule == "BS-HARVEST-01":
                o.status, o.reason, o.findings = "skipped", NO_LAYOUT, []
    root = repo_root if in_layout else None
    notes = _notes(rec)
    return Detection(path, gate, outcomes, location, topic, root, session_path, repo_root, notes)


def _twins(repo_root: str, topic: str) -> list[str]:
    """The session folders of the repository spelling the topic in another Unicode form, as
    the crawl finds them among the repository's sessions (gather: RepoContext.twins)."""
    if topic.isascii():
        return []
    found = []
    for folder, suffix in (("docs/research", "-brainstorm"), ("docs/history/brainstorms", "")):
        try:
            names = os.listdir(os.path.join(repo_root, folder))
        except OSError:
            continue  # no such folder, or one the walk of the session reports itself
        for name in names:
            other = name.removesuffix(suffix) if suffix else name
            named = not suffix or name.endswith(suffix)
            # A file so named is no session (the crawl says so of it, at the root).
            folder_too = os.path.isdir(os.path.join(repo_root, folder, name))
            if named and other != topic and composed(other) == composed(topic) and folder_too:
                found.append(f"{folder}/{name}")
    return sorted(found)


def _other_place(repo_root: str, topic: str, location: str) -> str | None:
    """The topic's folder in the repository's other location, as the crawl finds it among the
    repository's sessions (gather: RepoContext.other_place), in any Unicode form."""
    folder, suffix = (
        ("docs/history/brainstorms", "")
        if location == "research"
        else ("docs/research", "-brainstorm")
    )
    try:
        names = sorted(os.listdir(os.path.join(repo_root, folder)))
    except OSError:
        return None
    for name in names:
        if suffix and not name.endswith(suffix):
            continue
        same = composed(name.removesuffix(suffix) if suffix else name) == composed(topic)
        if same and os.path.isdir(os.path.join(repo_root, folder, name)):
            return f"{folder}/{name}"
    return None


def not_utf8(path: str) -> bool:
    """Whether a name on the path is not UTF-8 (held as surrogate escapes)."""
    return storable_name(path) != path


def _git_context(folder: str) -> tuple[GitRepo, str] | None:
    """The working tree holding `folder` as git finds it, unless a nearer `.git` is one git
    passed over (a link it cannot follow): that one is the repository, unread."""
    found = enclosing_repo(folder)
    nearest = _unread_git(folder)
    if nearest is None or (found is not None and found[0].path == nearest[0].path):
        return found or nearest
    return nearest


def _unread_git(folder: str) -> tuple[GitRepo, str] | None:
    """The nearest folder holding `.git` at or above `folder`, as the crawl finds one by its
    `.git` (a link that leads nowhere included): where git itself could not say (git missing,
    a damaged repository) BS-OPS-02 then fails on what git could not list, instead of being
    skipped as if there were no git."""
    top = os.path.realpath(folder)
    while True:
        if os.path.lexists(os.path.join(top, ".git")):
            rel = os.path.relpath(os.path.realpath(folder), top)
            return GitRepo(top), "" if rel == "." else rel.replace(os.sep, "/")
        parent = os.path.dirname(top)
        if parent == top:
            return None
        top = parent


def _notes(rec: Records) -> list[dict[str, Any]]:
    """Every parse issue in file and line order, as detect prints them: once each, though an
    issue that fails two rules is two rows of parse_issues."""
    issues = sorted(rec.of("parse_issues"), key=lambda i: (i["file"], i["line"] or 0, i["code"]))
    keys = ("file", "line", "code", "message")
    unique = dict.fromkeys(tuple(issue[k] for k in keys) for issue in issues)
    return [dict(zip(keys, values, strict=True)) for values in unique]


def _text_only(rec: Records) -> None:
    """Names that are not UTF-8 (a folder named with byte 0xff) reach the rows as surrogate
    escapes, which DuckDB refuses: the rows show them as U+FFFD, as the crawl does."""
    for row in [rec.snapshot, *(r for rows in rec.rows.values() for r in rows)]:
        for key, value in row.items():
            if isinstance(value, str) and not value.isascii():
                row[key] = _utf8(value)


def _utf8(text: str) -> str:
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte stands for
        raw = text.encode("utf-8", "replace")
    return raw.decode("utf-8", "replace")


def _add_repo_documents(repo: RepoRef, repo_root: str, session_path: str) -> None:
    """The repository's Markdown documents and file set, for BS-HARVEST-01 at the move gate.
    The session folder is named as a folder: one that is a link out of the repository (which
    the walk does not follow) would leave the repository with no session, and no documents.
    The whole folder is walked as one listing: one whose `docs/` (or `docs/history/`) is a
    link is no repository root to the crawl's search for them, yet detect reads its session
    through the link, so its documents must be read too."""
    entries = list(DirTree(repo_root).walk())
    for found in discover([*entries, Entry(session_path, True, 0, 0)]):
        if found.path == "":
            repo.documents, repo.files, repo.unseen = found.documents, found.files, found.unseen


def _add_named_files(ctx: RepoContext, repo_root: str, session_path: str) -> None:
    """Below the move gate the repository is not listed (no rule there reads its documents),
    but the files its manifest names are looked up: a one-word Destination naming a file
    (`CHANGELOG`) then reads as in a crawl and at the move gate, not as a note that it names
    no path (found by a hunt)."""
    from pipeline.gather import manifest_destinations

    try:
        manifest = ctx.read(f"{session_path}/ops/manifest.md")
    except (OSError, ReadError):
        return  # the session's own reading says why
    named = manifest_destinations(manifest, session_path, ctx.root_names)
    ctx.repo.files = {d for d in named if os.path.isfile(os.path.join(repo_root, d))}


def _evaluate(rec: Records, gate: str) -> list[RuleOutcome]:
    from pipeline.engine import connect
    from pipeline.store import rows_query

    con = connect(None, views=False)
    for table in CONTENT_TABLES:
        rows = [rec.snapshot] if table is SNAPSHOTS else rec.of(table.name)
        if rows:
            # One statement per table: executemany ran one per row (10-25 s for a large file).
            query, params = rows_query(table, rows)
            con.execute(f'INSERT INTO "{table.name}" BY NAME ({query})', params)
    results = con.execute(
        f"SELECT rule_id, status, file, line, message FROM ({results_sql(gate)}) "
        "ORDER BY rule_id, line NULLS FIRST, message"
    ).fetchall()
    by_rule: dict[str, RuleOutcome] = {}
    for rule in rules_for(gate):
        by_rule[rule.rule_id] = RuleOutcome(rule.rule_id, "pass")
    for rule_id, status, file, line, message in results:
        outcome = by_rule[rule_id]
        outcome.status = status
        if status == "skipped":
            outcome.reason = message
        elif status in ("fail", "info"):
            outcome.findings.append({"file": file, "line": line, "message": message})
    return [by_rule[r] for r in sorted(by_rule)]


def format_lines(detection: Detection) -> list[str]:
    lines = []
    for o in detection.outcomes:
        if o.status == "skipped":
            lines.append(f"{o.rule} skipped {o.reason}")
        elif not o.findings:
            lines.append(f"{o.rule} {o.status}")
        else:
            for f in o.findings:
                where = f"{f['file']}:{f['line']}" if f["line"] else f"{f['file']}"
                lines.append(f"{o.rule} {o.status} {where} {f['message']}")
    for note in detection.notes:
        where = f"{note['file']}:{note['line']}" if note["line"] else note["file"]
        lines.append(f"note {where} {note['message']}")
    lines.append(detection.result)
    # One line per finding, whatever a session's text holds (a terminal escape, a newline).
    return [visible(line) for line in lines]
