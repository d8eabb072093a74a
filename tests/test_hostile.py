"""Hostile trees and archives, crawled for real (spec §2, §3, §12; issue 8).

Every test puts a healthy control session (a copy of fixtures/cases/base/open/repo)
beside the hostile input, crawls for real under a deadline, and checks that the
hostile thing is a parse issue (docs/errors.md) or one clear error, that the
control is still read in full, and that nothing inside the roots changed. The
helpers (deadline, root snapshots, issue queries) are test_bad_input's.

What was tried, by input class (the README's reliability section quotes this):

| input class                                                       | tried                        |
|-------------------------------------------------------------------|------------------------------|
| decompression bombs (.tar.gz, .zip): one 300 MiB member, or 75    | 4 archives, 1,200 MiB        |
|   members of 4 MiB each under the per-file limit; ~300 KB on disk |   declared, ≤ 64 MiB read    |
| duplicate archive members (.zip, .tar.gz): a stale copy before    | 2 archives, 4 duplicates     |
|   the real one; a real copy before one over 8 MiB                 |                              |
| names with a newline or bytes that are not UTF-8: session files,  | 3 sources (directory, git,   |
|   a folder, session folders, repository documents                 |   tar) × 8 names             |
| a 100 MiB (sparse) file in a session folder                       | 1 file                       |
| empty session folders, across 100 repositories                    | 10,000 sessions              |
| files gone or turned into folders after listing (deterministic)   | 3 paths                      |
| files and session folders deleted while a crawl of 2,000 runs     | 600 files, 200 folders       |
| read-only roots (tree, git repository with a stale index, .tar.gz)| 3 roots × 6 commands         |
|   through run, crawl --git-history, check, stats, report, detect  |                              |
| CLI errors: one line, exit 2, no traceback                        | 18 command lines             |
"""

from __future__ import annotations

import io
import json
import os
import random
import resource
import shutil
import tarfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.check import check
from pipeline.cli import app
from pipeline.crawl import crawl
from pipeline.discover import discover
from pipeline.engine import connect
from pipeline.gather import RepoContext, session_input
from pipeline.parse.lexical import MAX_FILE_BYTES
from pipeline.parse.session import parse_session
from pipeline.schema import TABLES
from pipeline.sources.archive import MIN_EXPANSION_BYTES
from pipeline.sources.tree import BAD_NAME, FOLDER_VANISHED, VANISHED, DirTree, read_file
from pipeline.store import Out
from tests.conftest import copy_tree, git, make_git_repo
from tests.test_bad_input import (
    CONTROL,
    DEADLINE,
    SESSION,
    add_control,
    assert_control_read,
    counts,
    crawl_unchanged,
    deadline,
    issues,
    make_root,
    messages,
    ordered,
    snapshot_of,
    snapshot_row,
    tree_state,
    zip_control,
)
from tests.test_crawl import pack_tar

MiB = 1024**2


@pytest.fixture(scope="module")
def control_counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """Rows per table for the control session crawled alone: what 'read in full' means."""
    where = tmp_path_factory.mktemp("control")
    copy_tree(CONTROL, where / "root" / "control")
    con = crawl_unchanged([where / "root"], where / "root", where / "out")
    found = counts(con, snapshot_of(con, "control"))
    assert found["forks"] > 0 and found["turns"] > 0 and issues(con) == []
    return found


def read_back(out: Path) -> dict[str, int]:
    """Every row of every table's Parquet, read back with DuckDB (which checks the UTF-8)."""
    con = duckdb.connect()
    found = {}
    for name in TABLES:
        files = sorted((out / "tables" / name).glob("*/*.parquet"))
        if not files:  # a table with no rows has no file
            found[name] = 0
            continue
        rows = con.execute("select * from read_parquet(?)", [[str(f) for f in files]]).fetchall()
        for row in rows:
            for value in row:
                if isinstance(value, str):
                    value.encode("utf-8")  # no lone surrogate survived into a string
        found[name] = len(rows)
    return found


def bytes_read() -> int:
    """Bytes this process has read through read(2) and friends (Linux /proc/self/io rchar)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def peak_rss() -> int:
    """This process's peak resident set size, in bytes (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# ───────────────────────────── 1. decompression bombs ─────────────────────────────


class Zeros(io.RawIOBase):
    """`size` zero bytes, produced as read: a bomb's member without holding it in memory."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


BOMB_TOTAL = 300 * MiB
# (members, bytes each): one 300 MiB member (caught from its header), or 75 members of 4 MiB,
# each under the 8 MiB per-file limit, that only their running total gives away.
BOMB_SHAPES = {"one-member": (1, BOMB_TOTAL), "many-members": (75, 4 * MiB)}
BOMB_SESSION = "bomb/docs/research/zeros-brainstorm"
LATE_STATE = b"- Status: open\n"


def build_bomb(archive: Path, kind: str, members: int, size: int) -> list[str]:
    """Control first, then the bomb's members, then a late session; returns the member names."""
    names = [f"{BOMB_SESSION}/basis/zeros-{i:02d}.md" for i in range(members)]
    late = "late/docs/research/after-brainstorm/state.md"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            zip_control(zf)
            for name in names:
                entry = zipfile.ZipInfo(name)
                entry.compress_type = zipfile.ZIP_DEFLATED
                with zf.open(entry, "w", force_zip64=True) as member:
                    shutil.copyfileobj(Zeros(size), member, MiB)
            zf.writestr(late, LATE_STATE)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            add_control(tar)
            for name in names:
                header = tarfile.TarInfo(name)
                header.size = size
                tar.addfile(header, Zeros(size))
            tar_member(tar, late, LATE_STATE)
    return names


@pytest.mark.parametrize("shape", sorted(BOMB_SHAPES))
@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_decompression_bomb_stops_reading(
    tmp_path: Path, control_counts: dict[str, int], kind: str, shape: str
) -> None:
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / f"bomb.{kind}"
    members, size = BOMB_SHAPES[shape]
    names = build_bomb(archive, kind, members, size)
    assert archive.stat().st_size < 2 * MiB  # ~300 KB on disk for 300 MiB of content
    rss = peak_rss()
    started = time.perf_counter()
    con = crawl_unchanged([archive], holder, tmp_path / "out")
    seconds = time.perf_counter() - started
    assert seconds < 10, f"a bomb took {seconds:.1f} s to refuse"
    # Nothing near the bomb's size was ever held, at most the limit's worth of kept members
    # (the peak only rises, so this bites when the bomb would be the process's biggest load).
    assert peak_rss() - rss < MIN_EXPANSION_BYTES + 100 * MiB
    found = [row for row in issues(con) if row[3] == "archive-too-large"]
    assert found == [(None, f"{archive}:{archive.name}", None, "archive-too-large")]
    assert "decompression bomb" in messages(con, "archive-too-large")[0][1]
    # The session before the bomb is read whole; reading stopped there, so the late one is
    # absent, and each session found may have lost files after the stop (fail closed).
    control_id = snapshot_of(con, f"{archive.name}:control")
    assert counts(con, control_id) | {"files": 0} == control_counts | {"files": 0}
    incomplete = [row for row in issues(con) if row[3] == "archive-incomplete"]
    assert incomplete == [
        (f"{archive.name}:{repo}", ".", None, "archive-incomplete") for repo in ("bomb", "control")
    ]
    repos = {row[0] for row in con.execute("select distinct repo from observations").fetchall()}
    assert repos == {f"{archive.name}:control", f"{archive.name}:bomb"}
    bomb_id = snapshot_of(con, f"{archive.name}:bomb", BOMB_SESSION.removeprefix("bomb/"))
    # The bomb's session holds only the members listed before the stop, none read past it.
    listed = con.execute(
        "select file, sha256 is not null from files"
        " where snapshot_id = ? and file <> '.' order by file",
        [bomb_id],
    ).fetchall()
    assert 1 <= len(listed) <= len(names)
    read_bytes = sum(size for _, was_read in listed if was_read)
    assert read_bytes <= MIN_EXPANSION_BYTES
    assert read_back(tmp_path / "out")["observations"] == 2


# ───────────────────────────── 2. duplicate archive members ─────────────────────────────

STALE_FORKS = b"## F1 \xe2\x80\x94 A stale first copy [open]\n- Raised by: user\n"


@pytest.mark.parametrize("kind", ["zip", "tar.gz"])
def test_duplicate_members_keep_the_last_copy(
    tmp_path: Path, control_counts: dict[str, int], kind: str
) -> None:
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / f"dups.{kind}"
    forks = f"bad/{SESSION}/forks.md"
    state = f"big/{SESSION}/state.md"
    real_state = (CONTROL / SESSION / "state.md").read_bytes()
    oversized = real_state.ljust(MAX_FILE_BYTES + MiB, b"x")
    # bad/: a stale forks.md, then the real one. big/: the real state.md, then a 9 MiB one.
    if kind == "zip":
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            zip_control(zf)
            zf.writestr(forks, STALE_FORKS)
            with pytest.warns(UserWarning, match="Duplicate name"):
                zip_control(zf, "bad")
            zip_control(zf, "big")
            with pytest.warns(UserWarning, match="Duplicate name"):
                zf.writestr(state, oversized)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            add_control(tar)
            tar_member(tar, forks, STALE_FORKS)
            add_control(tar, "bad")
            add_control(tar, "big")
            tar_member(tar, state, oversized)
    con = crawl_unchanged([archive], holder, tmp_path / "out")
    assert [row for row in issues(con) if row[3] == "duplicate-member"] == [
        (None, f"{archive}:{forks}", None, "duplicate-member"),
        (None, f"{archive}:{state}", None, "duplicate-member"),
    ]
    assert all("last kept" in message for _, message in messages(con, "duplicate-member"))
    # The last forks.md is the real one: the bad session reads exactly like the control.
    bad_id = snapshot_of(con, f"{archive.name}:bad")
    assert counts(con, bad_id) == control_counts
    titles = con.execute("select title from forks where snapshot_id = ?", [bad_id]).fetchall()
    assert ("A stale first copy",) not in titles
    # The last state.md is over 8 MiB: not read, and the earlier copy does not stand in for it.
    big_id = snapshot_of(con, f"{archive.name}:big")
    assert snapshot_row(con, big_id, "state_exists", "status") == (True, None)
    own = con.execute(
        "select file, code from parse_issues where snapshot_id = ?", [big_id]
    ).fetchall()
    assert own == [("state.md", "too-large")]
    assert_control_read(con, control_counts, repo=f"{archive.name}:control")


def tar_member(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 1_783_000_000
    tar.addfile(info, io.BytesIO(data))


# ───────────────────────────── 3. hostile names ─────────────────────────────

LINK_DOC = b"See [the forks](research/demo-brainstorm/forks.md).\n"


def plant_names(repo: Path) -> None:
    """Names with a newline and with bytes that are not UTF-8, in and around a session."""
    session = os.fsencode(repo / SESSION)
    docs = os.fsencode(repo / "docs")
    with open(session + b"/basis/new\nline.md", "wb") as f:
        f.write(b"# a note whose name breaks the line\n")
    with open(session + b"/basis/bad\xffname.md", "wb") as f:
        f.write(b"# a note whose name is not UTF-8\n")
    os.makedirs(session + b"/basis/dir\xfe")
    with open(session + b"/basis/dir\xfe/inner.md", "wb") as f:
        f.write(b"# inside a folder whose name is not UTF-8\n")
    with open(docs + b"/notes\n.md", "wb") as f:  # a repository document that links in
        f.write(LINK_DOC)
    with open(docs + b"/bad\xfe.md", "wb") as f:
        f.write(LINK_DOC)
    state = (CONTROL / SESSION / "state.md").read_bytes()
    for folder in (b"line\nbreak-brainstorm", b"t\xff-brainstorm"):
        os.makedirs(docs + b"/research/" + folder)
        with open(docs + b"/research/" + folder + b"/state.md", "wb") as f:
            f.write(state)


@pytest.mark.parametrize("source", ["directory", "git"])
def test_hostile_names_in_a_directory_or_git_root(
    tmp_path: Path, control_counts: dict[str, int], source: str
) -> None:
    root, _ = make_root(tmp_path)
    plant_names(root / "bad")
    if source == "git":
        make_git_repo(root / "bad")
    out = tmp_path / "out"
    con = crawl_unchanged([root], root, out)
    bad = "\ufffd"
    assert issues(con) == ordered(
        [
            (None, f"{root}:bad/docs/research/t{bad}-brainstorm", None, "unreadable"),
            (None, f"{root}:bad/{SESSION}/basis/dir{bad}", None, "unreadable"),
            (None, f"bad/docs/bad{bad}.md", None, "unreadable"),
            ("bad", f"basis/bad{bad}name.md", None, "unreadable"),
            # The folders not entered: what they hold is unknown (a session's rules fail).
            ("bad", ".", None, "unreadable"),
            ("bad", f"basis/dir{bad}/", None, "unreadable"),
        ]
    )
    assert {message for _, message in messages(con, "unreadable")} == {BAD_NAME}
    demo = snapshot_of(con, "bad")
    files = dict(
        con.execute(
            "select file, sha256 is not null from files where snapshot_id = ?", [demo]
        ).fetchall()
    )
    assert files["basis/new\nline.md"] is True  # a newline is a valid name: read
    assert files[f"basis/bad{bad}name.md"] is False  # listed, not read
    links = con.execute("select file from links where snapshot_id = ?", [demo]).fetchall()
    assert links == [("docs/notes\n.md",)]
    newline = snapshot_of(con, "bad", "docs/research/line\nbreak-brainstorm")
    assert snapshot_row(con, newline, "topic", "status") == ("line\nbreak", "open")
    hollow = snapshot_of(con, "bad", f"docs/research/t{bad}-brainstorm")
    assert snapshot_row(con, hollow, "topic", "files") == (f"t{bad}", 0)
    if source == "git":
        tracked = con.execute(
            "select file from tracked_files where snapshot_id = ?", [demo]
        ).fetchall()
        assert {("basis/new\nline.md",), (f"basis/bad{bad}name.md",)} <= set(tracked)
    assert_control_read(con, control_counts)
    assert read_back(out)["observations"] == 4
    # census detect reads the same folder and answers under its contract.
    result = CliRunner().invoke(app, ["detect", str(root / "bad" / SESSION)])
    assert result.exit_code in (0, 1), result.output
    assert result.stdout.splitlines()[-1] in ("clean", "failing")
    assert "Traceback" not in result.output


@pytest.mark.parametrize("folder", [b"t\xff-brainstorm", b"demo-brainstorm/fragments/x\xff"])
def test_a_folder_whose_name_is_not_utf8_fails_the_rules_reading_it(
    tmp_path: Path, folder: bytes
) -> None:
    """A session folder whose name is not UTF-8 is not entered (its name cannot be stored), so
    it read as an empty folder (found by a hunt): its rules that pass on a missing file passed,
    BS-FORK-03 with an open fork inside, and a fragment in a sub-folder so named needed no
    manifest row. The folder is now unread, as one that cannot be listed: the rules fail."""
    from tests.conftest import FIXTURES

    repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", tmp_path / "root" / "r")
    research = os.fsencode(repo / "docs" / "research")
    if folder.startswith(b"t"):
        shutil.copytree(research + b"/demo-brainstorm", research + b"/" + folder)
        forks = research + b"/" + folder + b"/forks.md"
        with open(forks, "ab") as f:
            f.write("\n## F9 — Ship it? [open]\n- Closes when: a pick\n".encode())
        rule = "BS-FORK-03"
    else:
        os.makedirs(research + b"/" + folder)
        with open(research + b"/" + folder + b"/unrouted.md", "wb") as f:
            f.write(b"# Unrouted\n")
        rule = "BS-MANIFEST-01"
    out = tmp_path / "out"
    crawl([str(tmp_path / "root")], str(out), workers=1)
    check(str(out))
    found = connect(Out(out)).execute(
        "SELECT path, status FROM statuses WHERE rule_id = ? ORDER BY path", [rule]
    )
    bad = "\ufffd"
    paths = {"docs/research/demo-brainstorm": "pass" if folder.startswith(b"t") else "fail"}
    if folder.startswith(b"t"):
        paths[f"docs/research/t{bad}-brainstorm"] = "fail"
    assert dict(found.fetchall()) == paths


@pytest.mark.parametrize("gate", ["session", "move"])
def test_detect_fails_a_session_folder_whose_name_is_not_utf8_as_the_crawl_does(
    tmp_path: Path, gate: str
) -> None:
    """The crawl does not enter a session folder whose name is not UTF-8 and fails every rule
    of it; detect read the same folder through the path given and said `clean` (found by a
    hunt). Both now say the same: the folder's note, and the same rules failing."""
    from tests.conftest import FIXTURES

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "r")
    research = os.fsencode(repo / "docs" / "research")
    os.rename(research + b"/demo-brainstorm", research + b"/t\xff-brainstorm")
    session = os.fsdecode(research + b"/t\xff-brainstorm")
    detected = CliRunner().invoke(app, ["detect", session, "--gate", gate, "--json"])
    assert detected.exit_code == 1, detected.output
    found = json.loads(detected.stdout)
    assert found["result"] == "failing"
    assert {"file": ".", "line": None, "code": "unreadable", "message": BAD_NAME} in (
        found["notes"]
    )
    out = tmp_path / "out"
    crawl([str(tmp_path / "root")], str(out), workers=1)
    check(str(out))
    statuses = connect(Out(out)).execute("SELECT rule_id, status FROM statuses").fetchall()
    crawled = {rule: status for rule, status in statuses}
    assert "pass" not in crawled.values()
    assert {r["rule"]: r["status"] for r in found["rules"]} == {
        r["rule"]: crawled[r["rule"]] for r in found["rules"]
    }


def test_hostile_names_in_a_tar(tmp_path: Path, control_counts: dict[str, int]) -> None:
    source, _ = make_root(tmp_path)
    plant_names(source / "bad")
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / "names.tar"
    with tarfile.open(archive, "w") as tar:  # the names go in as their raw bytes
        tar.add(source / "control", "control")
        tar.add(source / "bad", "bad")
    assert b"bad\xffname.md" in archive.read_bytes()
    out = tmp_path / "out"
    con = crawl_unchanged([archive], holder, out)
    bad, repo = "\ufffd", "names.tar:bad"
    assert issues(con) == ordered(
        [
            (None, f"bad/docs/bad{bad}.md", None, "unreadable"),
            (repo, f"basis/bad{bad}name.md", None, "unreadable"),
            (repo, f"basis/dir{bad}/inner.md", None, "unreadable"),
            (repo, "state.md", None, "unreadable"),  # inside t\xff-brainstorm
            (repo, ".", None, "unreadable"),  # t\xff-brainstorm itself, a folder member
            (repo, f"basis/dir{bad}/", None, "unreadable"),
        ]
    )
    assert {message for _, message in messages(con, "unreadable")} == {BAD_NAME}
    demo = snapshot_of(con, repo)
    files = dict(
        con.execute(
            "select file, sha256 is not null from files where snapshot_id = ?", [demo]
        ).fetchall()
    )
    assert files["basis/new\nline.md"] is True
    links = con.execute("select file from links where snapshot_id = ?", [demo]).fetchall()
    assert links == [("docs/notes\n.md",)]
    newline = snapshot_of(con, repo, "docs/research/line\nbreak-brainstorm")
    assert snapshot_row(con, newline, "status") == ("open",)
    assert_control_read(con, control_counts, repo="names.tar:control")
    assert read_back(out)["observations"] == 4


# ───────────────────────────── 4. a huge file ─────────────────────────────


def test_100_mib_file_is_noted_not_read(tmp_path: Path, control_counts: dict[str, int]) -> None:
    root, bad = make_root(tmp_path)
    with open(bad / "forks.md", "r+b") as f:
        f.truncate(100 * MiB)  # sparse: no disk, and reading it would take 100 MiB of reads
    before = tree_state(root)
    read_at, started = bytes_read(), time.perf_counter()
    with deadline(DEADLINE):
        crawl([str(root)], str(tmp_path / "out"), workers=1)
    seconds, read = time.perf_counter() - started, bytes_read() - read_at
    assert tree_state(root) == before
    assert seconds < 10, f"{seconds:.1f} s"
    assert read < 20 * MiB, f"the crawl read {read} bytes: the 100 MiB file was read"
    con = connect(Out(tmp_path / "out"))
    assert issues(con) == [("bad", "forks.md", None, "too-large")]
    assert f"{100 * MiB} bytes" in messages(con, "too-large")[0][1]
    bad_id = snapshot_of(con, "bad")
    assert counts(con, bad_id)["forks"] == 0
    exists, size = snapshot_row(con, bad_id, "forks_exists", "bytes")
    assert exists is True and size >= 100 * MiB
    assert_control_read(con, control_counts)


# ───────────────────────────── 5. ten thousand empty sessions ─────────────────────────────

EMPTY_REPOS, EMPTY_PER_REPO = 100, 100


def test_ten_thousand_empty_sessions(tmp_path: Path, control_counts: dict[str, int]) -> None:
    root = tmp_path / "root"
    copy_tree(CONTROL, root / "control")
    for r in range(EMPTY_REPOS):
        research = root / f"repo-{r:03d}" / "docs" / "research"
        for i in range(EMPTY_PER_REPO):
            (research / f"t{r * EMPTY_PER_REPO + i}-brainstorm").mkdir(parents=True)
    total = EMPTY_REPOS * EMPTY_PER_REPO
    out = tmp_path / "out"
    before = tree_state(root)
    started = time.perf_counter()
    with deadline(DEADLINE * 2):
        summary = crawl([str(root)], str(out), workers=2)
        check(str(out))
    seconds = time.perf_counter() - started
    assert tree_state(root) == before
    assert seconds < 60, f"10,000 empty sessions took {seconds:.1f} s"
    assert summary.sessions == total + 1
    con = connect(Out(out))
    assert issues(con) == []
    failing = con.execute(
        """
        select count(distinct o.session_key), min(r.message), max(r.message)
        from observations o join rule_results r using (snapshot_id)
        where o.topic like 't%' and r.rule_id = 'BS-STATE-01'
            and r.status = 'fail' and r.gate = 'session'
        """
    ).fetchone()
    assert failing == (total, "state.md is missing", "state.md is missing")
    control = con.execute(
        """
        select r.status from observations o join rule_results r using (snapshot_id)
        where o.repo = 'control' and r.rule_id = 'BS-STATE-01' and r.gate = 'session'
        """
    ).fetchall()
    assert control == [("pass",)]
    assert_control_read(con, control_counts)


# ───────────────────────────── 6. files that vanish ─────────────────────────────


def test_files_that_vanish_after_listing_are_noted(tmp_path: Path) -> None:
    """Deterministic: list the root, then change it, then read (what a race does, in order)."""
    root, bad = make_root(tmp_path)
    repos = {repo.path: repo for block in DirTree(str(root)).blocks() for repo in discover(block)}
    listed = repos["bad"]
    session = listed.sessions[SESSION]
    (bad / "forks.md").unlink()  # gone
    (bad / "ledger.md").unlink()
    (bad / "ledger.md").mkdir()  # a folder now
    (root / "bad" / "docs" / "architecture" / "overview.md").unlink()  # a document, gone
    base = os.path.realpath(root / "bad")
    ctx = RepoContext(listed, lambda p: read_file(os.path.join(base, p)))
    inp = session_input(ctx, session)
    codes = {(file, code) for file, code, _ in inp.unreadable}
    assert codes == {("forks.md", "vanished"), ("ledger.md", "not-a-file")}
    rec = parse_session(inp)
    found = {(row["file"], row["code"]) for row in rec.of("parse_issues")}
    assert found == codes
    assert rec.snapshot["forks_exists"] is True and rec.of("forks") == []
    assert rec.snapshot["status"] == "open"  # the rest of the session is still read
    assert ("docs/architecture/overview.md", "vanished") in {(f, c) for f, c, _ in ctx.issues}
    # The control, listed at the same time, reads in full.
    control = repos["control"].sessions[SESSION]
    whole = session_input(
        RepoContext(repos["control"], lambda p: read_file(os.path.join(root, "control", p))),
        control,
    )
    assert whole.unreadable == []
    assert sorted(whole.files) == sorted(e.path for e in control.entries if not e.is_dir)


def test_a_file_deleted_between_listing_and_stat_is_noted_vanished(tmp_path: Path) -> None:
    """Deterministic: the walk lists a folder, the file goes, then the walk stats the entry
    (the race the threaded test below meets now and then). The file is noted vanished, as
    a read would note it, and a folder gone the same way is entered and found gone."""
    root, bad = make_root(tmp_path)
    (bad / "ops" / "extra").mkdir(parents=True)
    walker = DirTree(str(root))
    blocks = list(walker.blocks())
    with os.scandir(bad) as listing:
        items = {item.name: item for item in listing}
    with os.scandir(bad / "ops") as listing:
        folder = next(item for item in listing if item.name == "extra")
    (bad / "forks.md").unlink()
    (bad / "ops" / "extra").rmdir()
    stated = walker._entry(items["forks.md"], f"bad/{SESSION}/forks.md")
    assert (stated.is_dir, stated.problem) == (False, VANISHED)
    assert walker._entry(folder, f"bad/{SESSION}/ops/extra").is_dir
    # The session, read from the walk with that entry in it, says so and fails its rule.
    walked = [[stated if e.path == stated.path else e for e in block] for block in blocks]
    repos = {repo.path: repo for block in walked for repo in discover(block)}
    base = os.path.realpath(root / "bad")
    ctx = RepoContext(repos["bad"], lambda p: read_file(os.path.join(base, p)))
    inp = session_input(ctx, repos["bad"].sessions[SESSION])
    assert inp.unreadable == [("forks.md", "vanished", VANISHED)]
    rec = parse_session(inp)
    assert {(r["file"], r["code"]) for r in rec.of("parse_issues")} == {("forks.md", "vanished")}


def test_a_session_folder_deleted_between_its_listing_and_its_walk_is_noted_vanished(
    tmp_path: Path,
) -> None:
    """Deterministic: the walk lists docs/research/, the session folder goes, then the walk
    lists the session folder (the race the threaded test below meets now and then). Its
    files are unknown, so every rule fails, as for a file gone the same way: `vanished`, not
    `unreadable`, which says the folder is still there and cannot be listed."""
    root, bad = make_root(tmp_path)
    walker = DirTree(str(root))
    entries = []
    for entry in walker.walk_block("bad"):
        entries.append(entry)
        if entry.path == f"bad/{SESSION}" and entry.problem is None:
            shutil.rmtree(bad)
    (repo,) = discover(entries)
    base = os.path.realpath(root / "bad")
    ctx = RepoContext(repo, lambda p: read_file(os.path.join(base, p)))
    inp = session_input(ctx, repo.sessions[SESSION])
    assert inp.unreadable == [(".", "vanished", FOLDER_VANISHED)]
    rec = parse_session(inp)
    assert {(r["file"], r["code"]) for r in rec.of("parse_issues")} == {(".", "vanished")}


RACE_REPOS, RACE_PER_REPO = 200, 10


def race_root(root: Path) -> list[Path]:
    """2,000 small sessions; returns their folders."""
    state = (CONTROL / SESSION / "state.md").read_bytes()
    forks = (CONTROL / SESSION / "forks.md").read_bytes()
    folders = []
    for r in range(RACE_REPOS):
        for i in range(RACE_PER_REPO):
            folder = root / f"repo-{r:03d}" / "docs" / "research" / f"s{r}x{i}-brainstorm"
            folder.mkdir(parents=True)
            (folder / "state.md").write_bytes(state)
            (folder / "forks.md").write_bytes(forks)
            (folder / "thesis.md").write_bytes(b"# Thesis\n")
            folders.append(folder)
    return folders


def test_crawl_survives_files_deleted_while_it_runs(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    root = tmp_path / "root"
    copy_tree(CONTROL, root / "control")
    folders = race_root(root)
    doomed_files = [f / "forks.md" for n, f in enumerate(folders) if n % 3 == 0 and n % 10 != 5]
    doomed_folders = [f for n, f in enumerate(folders) if n % 10 == 5]
    assert (len(doomed_files), len(doomed_folders)) == (600, 200)  # as the docstring says
    victims: list[Path] = [*doomed_files, *doomed_folders]
    random.Random(8).shuffle(victims)
    before = tree_state(root)
    failure: list[BaseException] = []
    out = tmp_path / "out"

    def run() -> None:
        try:
            crawl([str(root)], str(out), workers=2)
        except BaseException as err:  # handed to the main thread
            failure.append(err)

    worker = threading.Thread(target=run)
    worker.start()
    for victim in victims:
        if victim.is_dir():
            shutil.rmtree(victim)
        else:
            victim.unlink()
        time.sleep(0.001)
    worker.join(DEADLINE)
    assert not worker.is_alive(), "the crawl hangs"
    assert not failure, failure
    # Nothing was written into the root: no new path, no remaining file changed.
    after = tree_state(root)
    assert set(after) <= set(before)
    assert all(before[k] == v for k, v in after.items() if v[0] == "file")

    con = connect(Out(out))
    codes = {row[3] for row in issues(con)}
    assert codes <= {"vanished", "unreadable-dir"}, codes
    # One row per observed session: (files listed, forks read, forks.md read?, its issues).
    rows = con.execute(
        """
        select o.repo || '/' || o.path,
            (select count(*) from files f where f.snapshot_id = o.snapshot_id),
            (select count(*) from forks k where k.snapshot_id = o.snapshot_id),
            (select list(f.sha256 is not null) from files f
                where f.snapshot_id = o.snapshot_id and f.file = 'forks.md'),
            (select list(i.file || ' ' || i.code order by i.file) from parse_issues i
                where i.snapshot_id = o.snapshot_id)
        from observations o
        """
    ).fetchall()
    observed = {row[0]: row[1:] for row in rows}
    gone = {f.relative_to(root).as_posix() for f in doomed_folders}
    lost_forks = {f.parent.relative_to(root).as_posix() for f in doomed_files}
    remaining = {f.relative_to(root).as_posix() for f in folders} - gone
    assert remaining <= set(observed), "a session still there was not observed"
    forks = control_counts["forks"]
    outcomes: dict[str, int] = {}
    for folder in sorted(remaining):
        files, forks_read, forks_md, own = observed[folder]
        if folder not in lost_forks:
            outcome = "untouched"  # read in full
            assert (files, forks_read, forks_md, own) == (3, forks, [True], None), folder
        elif forks_md == [True]:
            outcome = "read before it went"
            assert (files, forks_read, own) == (3, forks, None), folder
        elif forks_md == [False]:
            outcome = "listed, then gone"
            assert (files, forks_read, own) == (3, 0, ["forks.md vanished"]), folder
        else:
            outcome = "gone before the listing"
            assert (files, forks_read, forks_md, own) == (2, 0, None, None), folder
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes["untouched"] == len(remaining) - len(lost_forks)
    assert_control_read(con, control_counts)


# ───────────────────────────── 7. roots are read-only ─────────────────────────────


def test_roots_are_never_written(tmp_path: Path) -> None:
    holder = tmp_path / "roots"
    tree = copy_tree(CONTROL, holder / "tree")
    repo = copy_tree(CONTROL, holder / "repo")
    make_git_repo(repo)
    git(repo, "remote", "add", "origin", "https://example.invalid/team/repo.git")
    # A stale index: `git status` would rewrite .git/index here; the census must not.
    state = repo / SESSION / "state.md"
    os.utime(state, ns=(state.stat().st_atime_ns, state.stat().st_mtime_ns + 10**9))
    archive = pack_tar(tree, holder / "corpus.tar.gz")
    roots = [str(tree), str(repo), str(archive)]
    before = tree_state(holder)
    out = tmp_path / "out"
    runner = CliRunner()
    commands = [
        ["run", *roots, "--out", str(out)],
        ["crawl", *roots, "--out", str(out), "--git-history", "--label", "run=again"],
        ["check", "--out", str(out)],
        ["stats", "--out", str(out)],
        ["report", "--out", str(out)],
        ["detect", str(repo / SESSION), "--gate", "move"],
    ]
    with deadline(DEADLINE):
        for command in commands:
            result = runner.invoke(app, command)
            assert result.exit_code in (0, 1), (command, result.output)
            assert "Traceback" not in result.output
    after = tree_state(holder)
    assert set(after) == set(before), set(after) ^ set(before)  # no new path, none gone
    for key, value in before.items():
        assert after[key] == value, key  # the same bytes, mode and mtime
    assert not list(holder.rglob("__pycache__"))
    assert not (repo / ".git" / "index.lock").exists()
    con = connect(Out(out))
    sessions = con.execute("select count(distinct session_key) from observations").fetchone()
    assert sessions == (3,)
    assert con.execute("select count(*) from tracked_files").fetchone()[0] > 0


@pytest.mark.parametrize("inside", ["tables", "state", "staging/old"])
def test_a_root_inside_out_is_refused(tmp_path: Path, inside: str) -> None:
    """`census crawl OUT/tables --out OUT` wrote the run's Parquet files into the root it
    crawled (found by a hunt), against spec §12 (the census never writes in a root). A root
    inside OUT is refused, as OUT that is a root itself is, and nothing is written."""
    out = tmp_path / "out"
    copy_tree(CONTROL, tmp_path / "corpus" / "control")
    runner = CliRunner()
    assert runner.invoke(app, ["crawl", str(tmp_path / "corpus"), "--out", str(out)]).exit_code == 0
    root = out / inside
    root.mkdir(parents=True, exist_ok=True)
    before = tree_state(out)
    line = one_line_error(["crawl", str(root), "--out", str(out)], tmp_path)
    assert "lies inside --out" in line and str(root) in line, line
    assert tree_state(out) == before
    # A corpus beside OUT's own files, in its folder, is the user's: crawled, never written.
    corpus = tmp_path / "corpus"
    corpus.rename(out / "corpus")
    result = runner.invoke(app, ["crawl", str(out / "corpus"), "--out", str(out)])
    assert result.exit_code == 0, result.output


# ───────────────────────────── 8. CLI errors ─────────────────────────────


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An OUT with one labelled run; the other places the errors name."""
    base = tmp_path_factory.mktemp("cli")
    copy_tree(CONTROL, base / "root" / "control")
    (base / "plain.txt").write_text("not an archive\n")
    result = CliRunner().invoke(
        app, ["crawl", str(base / "root"), "--out", str(base / "out"), "--label", "run=base"]
    )
    assert result.exit_code == 0, result.output
    return base


# name → (arguments with {base} for the fixture's folder, words the one line must hold:
# the thing, the cause, what to do).
CLI_ERRORS: dict[str, tuple[list[str], list[str]]] = {
    "missing root": (
        ["crawl", "{base}/missing", "--out", "{base}/new"],
        ["{base}/missing", "does not exist", "give a directory"],
    ),
    "missing root, run": (
        ["run", "{base}/missing", "--out", "{base}/new"],
        ["{base}/missing", "does not exist", "give a directory"],
    ),
    "plain file root": (
        ["crawl", "{base}/plain.txt", "--out", "{base}/new"],
        ["{base}/plain.txt", "not an archive", "use .tar"],
    ),
    "check never crawled": (
        ["check", "--out", "{base}/new"],
        ["{base}/new", "holds no census runs", "census crawl ROOT"],
    ),
    "stats never crawled": (
        ["stats", "--out", "{base}/new"],
        ["{base}/new", "holds no census runs", "census crawl ROOT"],
    ),
    "sql never crawled": (
        ["sql", "select 1", "--out", "{base}/new"],
        ["{base}/new", "holds no census runs", "census crawl ROOT"],
    ),
    "report never crawled": (
        ["report", "--out", "{base}/new"],
        ["{base}/new", "holds no census runs", "census crawl ROOT"],
    ),
    "compare never crawled": (
        ["compare", "--out", "{base}/new", "--baseline", "run=a", "--candidate", "run=b"],
        ["{base}/new", "holds no census runs", "census crawl ROOT"],
    ),
    "label without =": (
        ["crawl", "{base}/root", "--out", "{base}/new", "--label", "baseline"],
        ["'baseline'", "is not k=v", "write --label run=baseline"],
    ),
    "shard 0/3": (
        ["crawl", "{base}/root", "--out", "{base}/new", "--shard", "0/3"],
        ["'0/3'", "1 <= K <= N", "write --shard"],
    ),
    "detect a file": (
        ["detect", "{base}/plain.txt"],
        ["{base}/plain.txt", "not a directory", "give a session folder"],
    ),
    "detect nothing": (
        ["detect", "{base}/missing"],
        ["{base}/missing", "no such directory", "give a session folder"],
    ),
    "compare selector matching nothing": (
        ["compare", "--out", "{base}/out", "--baseline", "run=nope", "--candidate", "run=base"],
        ["run=nope", "no run carries the labels", "labels in OUT: run=base"],
    ),
    "sql syntax error": (
        ["sql", "selec oops from", "--out", "{base}/out"],
        ['"selec"', "syntax error"],  # no hint of what to do: see the report of issue 8
    ),
}
LOCKED: list[list[str]] = [
    ["crawl", "{base}/root", "--out", "{base}/out"],
    ["run", "{base}/root", "--out", "{base}/out"],
    ["check", "--out", "{base}/out"],
    ["crawl", "{base}/root", "--out", "{base}/out", "--shard", "1/2", "--point", "night"],
]


def one_line_error(args: list[str], base: Path) -> str:
    """Run the CLI; assert exit 2, one line on stderr, nothing on stdout, no traceback."""
    result = CliRunner().invoke(app, [a.format(base=base) for a in args])
    assert result.exit_code == 2, (args, result.output)
    assert "Traceback" not in result.output
    assert result.stdout == "", result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("census: "), lines[0]
    return lines[0]


@pytest.mark.parametrize("case", sorted(CLI_ERRORS))
def test_cli_error_is_one_line_exit_2(crawled: Path, case: str) -> None:
    args, words = CLI_ERRORS[case]
    before = tree_state(crawled / "out")
    line = one_line_error(args, crawled)
    for word in words:
        assert word.format(base=crawled) in line, (word, line)
    assert not (crawled / "new").exists(), "an error left an OUT behind"
    assert tree_state(crawled / "out") == before


# Paths holding a line break (found by a hunt): the error printed them raw, over two lines.
BROKEN_PATHS: dict[str, list[str]] = {
    "detect missing": ["detect", "{base}/no\nsuch"],
    "detect a file": ["detect", "{base}/line\nbreak/plain.txt"],
    "check never crawled": ["check", "--out", "{base}/no\rsuch"],
    "crawl into a file": ["crawl", "{base}/root", "--out", "{base}/line\nbreak/plain.txt"],
    "label": ["crawl", "{base}/root", "--out", "{base}/new", "--label", "a\u2028b"],
}


@pytest.mark.parametrize("case", sorted(BROKEN_PATHS))
def test_an_error_naming_a_path_with_a_line_break_is_one_line(crawled: Path, case: str) -> None:
    (crawled / "line\nbreak").mkdir(exist_ok=True)
    (crawled / "line\nbreak" / "plain.txt").write_text("not an archive\n")
    line = one_line_error(BROKEN_PATHS[case], crawled)
    assert "\\n" in line or "\\r" in line or "\\u2028" in line, line


@pytest.mark.parametrize("args", LOCKED, ids=[" ".join(a[:1] + a[4:]) for a in LOCKED])
def test_second_writer_on_a_locked_out(crawled: Path, args: list[str]) -> None:
    out = crawled / "out"
    with Out(out).lock():
        before = tree_state(out)
        line = one_line_error(args, crawled)
        assert tree_state(out) == before
    assert str(out) in line and "another census process is writing" in line
    assert "use another --out" in line


def test_a_file_swapped_for_a_link_out_of_the_root_after_the_listing_is_not_read(
    tmp_path: Path,
) -> None:
    """The walk checks each link it lists, but a session file replaced by a link to a file out
    of the root between the listing and the read was read wherever it led: a crawl stored a
    fork from outside the root (found by a hunt). A link that stays inside is read."""
    from pipeline.sources.tree import OUT_OF_ROOT, DirTree, ReadError

    root = tmp_path / "root"
    (root / "inside").mkdir(parents=True)
    (root / "inside" / "real.md").write_text("# inside\n")
    (tmp_path / "secret.md").write_text("## F77 — SECRET-OUTSIDE [open]\n")
    tree = DirTree(str(root))
    (root / "forks.md").symlink_to(tmp_path / "secret.md")  # as if swapped in after listing
    (root / "linked.md").symlink_to(root / "inside" / "real.md")
    with pytest.raises(ReadError) as refused:
        tree.read("forks.md")
    assert (refused.value.code, refused.value.message) == ("unreadable", OUT_OF_ROOT)
    assert tree.read("linked.md") == b"# inside\n"


def test_a_folder_above_the_repositories_that_cannot_be_entered_is_noted(tmp_path: Path) -> None:
    """A folder above the repositories whose stat fails (its path past PATH_MAX here; a
    parent listed but not searchable does the same) is a folder not listed: a root issue
    names it. Before, the walk took it for a file it could not stat and dropped it, so the
    repositories under it and their sessions vanished from the night without a word (found
    by a hunt)."""
    root = tmp_path / "root"
    copy_tree(CONTROL, root / "control")
    # Long names, not many levels: past 4,096 bytes whatever tmp_path is, yet shallow enough
    # for shutil.rmtree (pytest's clean-up) to remove.
    names = ["d" * 200] * 21 + ["r", "docs", "research", "deep-brainstorm"]
    fd = os.open(root, os.O_RDONLY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)
    crawl([str(root)], str(tmp_path / "out"), workers=1)
    with connect(Out(tmp_path / "out")) as con:
        topics = con.execute("SELECT DISTINCT topic FROM observations").fetchall()
        noted = con.execute(
            "SELECT code, message FROM parse_issues WHERE snapshot_id IS NULL"
        ).fetchall()
    assert topics == [("demo",)]
    assert noted == [("unreadable-dir", "cannot list directory: File name too long")]
    shutil.rmtree(root)  # pytest's clean-up must be able to remove it too


def test_a_query_that_outgrows_memory_spills_outside_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB spills to `./.tmp` by default: the current folder, which `census crawl .` reads
    (found by a hunt; spec §12, the census never writes inside what it reads). Every database
    of the census spills under the system's temp folder, gone when it closes."""
    import tempfile

    from pipeline.engine import connect, in_memory

    monkeypatch.chdir(tmp_path)
    con = in_memory(memory_limit="40MB", threads="1")
    con.execute("SET enable_progress_bar = false")
    spill = Path(con.execute("SELECT current_setting('temp_directory')").fetchone()[0])
    assert spill.is_relative_to(tempfile.gettempdir()) and not spill.is_relative_to(tmp_path)
    sorted_rows = (
        "SELECT count(*) FROM (SELECT md5(range::VARCHAR) AS s FROM range(2000000) ORDER BY s)"
    )
    assert con.execute(sorted_rows).fetchone() == (2_000_000,)
    assert spill.is_dir(), "the query spilled"
    assert list(tmp_path.iterdir()) == []
    con.close()
    assert not spill.exists()
    other = connect(None).execute("SELECT current_setting('temp_directory')").fetchone()[0]
    assert Path(other).is_relative_to(tempfile.gettempdir()) and Path(other) != spill
