"""Crawl-level bad input (spec §2, §12): hostile trees and archives, crawled for real.

Each test builds a root in tmp_path holding a healthy control session (a copy of
fixtures/cases/base/open/repo) beside something hostile, runs the real crawl into a
separate OUT, and checks three things with DuckDB over OUT:

- the hostile thing is a parse issue with its stable code (docs/errors.md);
- the control session in the same root is still read in full (the same rows as when
  it is crawled alone, and no parse issue of its own);
- nothing inside the root changed (every path, its bytes or link target, and its mtime).

Every crawl runs under a deadline, so a hang fails the test instead of stalling the run.
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import shutil
import signal
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.parse.lexical import MAX_FILE_BYTES
from pipeline.sources import RootError
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree

CONTROL = FIXTURES / "cases" / "base" / "open" / "repo"
SESSION = "docs/research/demo-brainstorm"
# Tables whose rows for the control must match a crawl of the control alone.
CONTENT = (
    "aspects",
    "aspect_refs",
    "forks",
    "ledger",
    "ledger_resolves",
    "turns",
    "sync_events",
    "fragments",
    "files",
)
# Seconds any one crawl may take here before it counts as a hang.
DEADLINE = 60.0

Issue = tuple[str | None, str, int | None, str]  # (repo, file, line, code)


# ───────────────────────────── helpers ─────────────────────────────


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the main thread when the block runs longer than `seconds`."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s: the crawl hangs")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def tree_state(top: Path) -> dict[str, tuple[Any, ...]]:
    """Every path under `top` (itself included): kind, content hash or link target, mode, mtime.

    Links are recorded, never followed; special files are never opened.
    """
    state: dict[str, tuple[Any, ...]] = {}
    st = top.lstat()
    state["."] = ("dir", st.st_mode, st.st_mtime_ns)
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        for name in sorted([*dirnames, *filenames]):
            path = Path(dirpath, name)
            st = path.lstat()
            rel = path.relative_to(top).as_posix()
            if stat.S_ISLNK(st.st_mode):
                state[rel] = ("link", os.readlink(path), st.st_mtime_ns)
            elif stat.S_ISREG(st.st_mode):
                try:
                    digest = hashlib.sha256(path.read_bytes()).hexdigest()
                except PermissionError:  # the chmod 000 case, when not running as root
                    digest = "unreadable"
                state[rel] = ("file", digest, st.st_size, st.st_mode, st.st_mtime_ns)
            else:
                state[rel] = ("other", st.st_mode, st.st_mtime_ns)
    return state


def make_root(tmp_path: Path) -> tuple[Path, Path]:
    """A root with the control repository and a copy of it to spoil; returns (root, bad session)."""
    root = tmp_path / "root"
    copy_tree(CONTROL, root / "control")
    copy_tree(CONTROL, root / "bad")
    return root, root / "bad" / SESSION


def crawl_unchanged(roots: list[Path], watch: Path, out: Path) -> Any:
    """Crawl `roots` into `out` and assert nothing under `watch` changed; a DuckDB connection."""
    before = tree_state(watch)
    with deadline(DEADLINE):
        crawl([str(r) for r in roots], str(out), workers=1)
    assert tree_state(watch) == before, "the crawl changed something inside the root"
    return connect(Out(out))


def ordered(rows: list[Issue]) -> list[Issue]:
    """Issues in one order, nulls first (None never compares with a value)."""
    return sorted(rows, key=lambda row: tuple((value is not None, value) for value in row))


def issues(con: Any) -> list[Issue]:
    """Every parse issue with the repository of its snapshot (None for a root's own issue)."""
    rows = con.execute(
        """
        select o.repo, i.file, i.line, i.code
        from parse_issues i
        left join (select distinct snapshot_id, repo from observations) o using (snapshot_id)
        """
    ).fetchall()
    return ordered([tuple(row) for row in rows])


def messages(con: Any, code: str) -> list[tuple[str, str]]:
    rows = con.execute(
        "select file, message from parse_issues where code = ? order by all", [code]
    ).fetchall()
    return [tuple(row) for row in rows]


def snapshot_of(con: Any, repo: str, path: str = SESSION) -> str:
    found = con.execute(
        "select distinct snapshot_id from observations where repo = ? and path = ?", [repo, path]
    ).fetchall()
    assert len(found) == 1, f"{repo}:{path} observed as {found}"
    return str(found[0][0])


def counts(con: Any, snapshot_id: str) -> dict[str, int]:
    return {
        table: con.execute(
            f'select count(*) from "{table}" where snapshot_id = ?', [snapshot_id]
        ).fetchone()[0]
        for table in CONTENT
    }


def snapshot_row(con: Any, snapshot_id: str, *columns: str) -> tuple[Any, ...]:
    names = ", ".join(f'"{c}"' for c in columns)
    row = con.execute(f"select {names} from snapshots where snapshot_id = ?", [snapshot_id])
    return tuple(row.fetchone())


@pytest.fixture(scope="module")
def control_counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """Rows per table for the control session crawled alone: what 'read in full' means."""
    where = tmp_path_factory.mktemp("control")
    copy_tree(CONTROL, where / "root" / "control")
    con = crawl_unchanged([where / "root"], where / "root", where / "out")
    found = counts(con, snapshot_of(con, "control"))
    assert found["forks"] > 0 and found["ledger"] > 0 and found["turns"] > 0
    assert found["sync_events"] > 0 and found["aspects"] > 0
    assert issues(con) == []
    return found


def assert_control_read(con: Any, control_counts: dict[str, int], repo: str = "control") -> None:
    snapshot_id = snapshot_of(con, repo)
    assert counts(con, snapshot_id) == control_counts
    assert snapshot_row(con, snapshot_id, "status", "state_exists") == ("open", True)
    own = con.execute(
        "select count(*) from parse_issues where snapshot_id = ?", [snapshot_id]
    ).fetchone()[0]
    assert own == 0


# ───────────────────────────── text that is not clean UTF-8 ─────────────────────────────


def test_invalid_utf8_is_replaced_and_noted(tmp_path: Path, control_counts: dict[str, int]) -> None:
    root, bad = make_root(tmp_path)
    forks = bad / "forks.md"
    data = forks.read_bytes()
    heading = "## F1 — Do security alerts".encode()
    assert heading in data
    forks.write_bytes(data.replace(heading, b"## F1 \xe2\x80\x94 Do s\xffcurity alerts"))
    con = crawl_unchanged([root], root, tmp_path / "out")
    assert issues(con) == [("bad", "forks.md", 3, "invalid-utf8")]
    bad_id = snapshot_of(con, "bad")
    titles = con.execute(
        "select fork_id, title from forks where snapshot_id = ? order by line", [bad_id]
    ).fetchall()
    assert [t[0] for t in titles] == ["F1", "F2", "F4"]
    assert titles[0][1] == "Do s\ufffdcurity alerts ever ride in a digest?"
    assert_control_read(con, control_counts)


def test_bom_is_ignored(tmp_path: Path, control_counts: dict[str, int]) -> None:
    root, bad = make_root(tmp_path)
    for path in bad.rglob("*.md"):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    con = crawl_unchanged([root], root, tmp_path / "out")
    assert issues(con) == []
    bad_id = snapshot_of(con, "bad")
    assert bad_id != snapshot_of(con, "control")  # different bytes, the same rows
    assert counts(con, bad_id) == control_counts
    assert snapshot_row(con, bad_id, "status", "status_line") == ("open", 2)
    assert_control_read(con, control_counts)


def test_crlf_reads_like_lf_with_the_same_lines(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    root, bad = make_root(tmp_path)
    for path in bad.rglob("*.md"):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    con = crawl_unchanged([root], root, tmp_path / "out")
    assert issues(con) == []
    bad_id, control_id = snapshot_of(con, "bad"), snapshot_of(con, "control")
    assert counts(con, bad_id) == control_counts
    for table, columns in (
        ("forks", ("fork_id", "line", "title", "closes_when")),
        ("ledger", ("decision_id", "line", "decision", "why")),
        ("turns", ("turn_id", "line", "at")),
        ("sync_events", ("sync_id", "kind", "line", "at", "summary")),
    ):
        names = ", ".join(f'"{c}"' for c in columns)
        query = f"select {names} from {table} where snapshot_id = ? order by line"
        got = con.execute(query, [bad_id]).fetchall()
        assert got == con.execute(query, [control_id]).fetchall(), table
    assert_control_read(con, control_counts)


def test_binary_file_as_forks_md(tmp_path: Path, control_counts: dict[str, int]) -> None:
    root, bad = make_root(tmp_path)
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + bytes(range(256)) * 8
    (bad / "forks.md").write_bytes(png)
    con = crawl_unchanged([root], root, tmp_path / "out")
    codes = {(repo, file, code) for repo, file, _, code in issues(con)}
    assert codes == {("bad", "forks.md", "binary"), ("bad", "forks.md", "invalid-utf8")}
    bad_id = snapshot_of(con, "bad")
    assert counts(con, bad_id)["forks"] == 0
    assert snapshot_row(con, bad_id, "forks_exists", "status") == (True, "open")
    assert_control_read(con, control_counts)


# ───────────────────────────── size and emptiness ─────────────────────────────


def test_file_over_8_mib_is_noted_not_read(tmp_path: Path, control_counts: dict[str, int]) -> None:
    root, bad = make_root(tmp_path)
    (bad / "forks.md").write_bytes(
        b"## F1 \xe2\x80\x94 big [open]\n".ljust(MAX_FILE_BYTES + 1, b"x")
    )
    # Exactly at the limit is still read.
    (bad / "basis" / "exact.md").write_bytes(b"#".ljust(MAX_FILE_BYTES, b"y"))
    con = crawl_unchanged([root], root, tmp_path / "out")
    assert issues(con) == [("bad", "forks.md", None, "too-large")]
    bad_id = snapshot_of(con, "bad")
    assert counts(con, bad_id)["forks"] == 0
    files = dict(
        con.execute(
            "select file, (sha256 is not null) from files where snapshot_id = ?", [bad_id]
        ).fetchall()
    )
    assert files["forks.md"] is False and files["basis/exact.md"] is True
    assert snapshot_row(con, bad_id, "forks_exists") == (True,)
    assert_control_read(con, control_counts)


def test_a_directory_named_as_a_session_file_is_noted(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    """A folder named forks.md is no forks.md: a `not-a-file` issue failing BS-FORK-01, not
    a file that silently went missing."""
    root, bad = make_root(tmp_path)
    (bad / "forks.md").unlink()
    (bad / "forks.md").mkdir()
    (bad / "forks.md" / "F1.md").write_text("## F1 — a question [open]\n")
    con = crawl_unchanged([root], root, tmp_path / "out")
    assert issues(con) == [("bad", "forks.md", None, "not-a-file")]
    rule = con.execute(
        "select rule_id from parse_issues where snapshot_id = ?", [snapshot_of(con, "bad")]
    ).fetchone()
    assert rule == ("BS-FORK-01",)
    assert_control_read(con, control_counts)


def test_empty_files(tmp_path: Path, control_counts: dict[str, int]) -> None:
    root, bad = make_root(tmp_path)
    for path in bad.rglob("*"):
        if path.is_file():
            path.write_bytes(b"")
    con = crawl_unchanged([root], root, tmp_path / "out")
    assert issues(con) == []  # empty is not unreadable: the rules see the gaps
    bad_id = snapshot_of(con, "bad")
    found = counts(con, bad_id)
    assert found["files"] == control_counts["files"]
    assert all(n == 0 for table, n in found.items() if table not in ("files", "fragments"))
    assert snapshot_row(con, bad_id, "state_exists", "status", "thesis_exists") == (
        True,
        None,
        True,
    )
    assert_control_read(con, control_counts)


def test_missing_state_md_and_an_empty_folder_are_still_sessions(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    root, bad = make_root(tmp_path)
    (bad / "state.md").unlink()
    (root / "bad" / "docs" / "research" / "hollow-brainstorm").mkdir()
    con = crawl_unchanged([root], root, tmp_path / "out")
    assert issues(con) == []
    bad_id = snapshot_of(con, "bad")
    assert snapshot_row(con, bad_id, "state_exists", "status", "stage") == (False, None, "open")
    assert counts(con, bad_id)["forks"] == control_counts["forks"]
    hollow = snapshot_of(con, "bad", "docs/research/hollow-brainstorm")
    assert snapshot_row(con, hollow, "topic", "state_exists", "files") == ("hollow", False, 0)
    assert_control_read(con, control_counts)


def test_unparseable_headings_and_timestamps(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    root, bad = make_root(tmp_path)
    appended = {
        "forks.md": b"\n## F9 Missing the dash [open]\n- Closes when: never\n",
        "ledger.md": b"\n## D3 without a dash\n- Decision: kept\n",
        "ops/capture.md": b"---\n### T6 \xc2\xb7 yesterday evening\n",
        # A paragraph of its own (directly under the dispatch it would continue it, §3.1).
        "ops/sync-log.md": b"S3 | gate: stop | dispatched: soon | scope: x\n\nnot a sync line\n",
    }
    before: dict[str, int] = {}
    for name, text in appended.items():
        data = (bad / name).read_bytes()
        assert data.endswith(b"\n")
        before[name] = len(data.splitlines())
        (bad / name).write_bytes(data + text)
    state = bad / "state.md"
    old = "- Last compose: 2026-07-08T14:30Z"
    assert state.read_text().splitlines()[5] == old
    state.write_text(state.read_text().replace(old, "- Last compose: soon"))
    con = crawl_unchanged([root], root, tmp_path / "out")
    # census.md §3.1: an ID followed by a space starts an entry, so `## F9 Missing the dash`
    # is fork F9 and `## D3 without a dash` entry D3; a turn heading whose timestamp cannot be
    # read is the issue that fails BS-COMPOSE-02.
    assert issues(con) == ordered(
        [
            ("bad", "ops/capture.md", before["ops/capture.md"] + 2, "bad-turn-heading"),
            ("bad", "ops/sync-log.md", before["ops/sync-log.md"] + 1, "bad-timestamp"),
            ("bad", "ops/sync-log.md", before["ops/sync-log.md"] + 3, "bad-sync-line"),
            ("bad", "state.md", 6, "bad-timestamp"),
        ]
    )
    bad_id = snapshot_of(con, "bad")
    # What could be read is kept: the extra fork and entry count, the turn and sync rows exist.
    found = counts(con, bad_id)
    assert found["forks"] == control_counts["forks"] + 1
    assert found["ledger"] == control_counts["ledger"] + 1
    assert found["turns"] == control_counts["turns"] + 1
    assert found["sync_events"] == control_counts["sync_events"] + 1
    assert snapshot_row(con, bad_id, "last_compose_raw", "last_compose") == ("soon", None)
    assert_control_read(con, control_counts)


# ───────────────────────────── archives ─────────────────────────────


def add_member(tar: tarfile.TarFile, name: str, data: bytes = b"", **info: Any) -> None:
    member = tarfile.TarInfo(name)
    member.size = len(data)
    member.mtime = 1_783_000_000
    for key, value in info.items():
        setattr(member, key, value)
    tar.addfile(member, io.BytesIO(data) if data else None)


def add_control(tar: tarfile.TarFile, prefix: str = "control") -> None:
    for path in sorted(CONTROL.rglob("*")):
        if path.is_file():
            add_member(tar, f"{prefix}/{path.relative_to(CONTROL).as_posix()}", path.read_bytes())


def zip_control(archive: zipfile.ZipFile, prefix: str = "control") -> None:
    for path in sorted(CONTROL.rglob("*")):
        if path.is_file():
            archive.writestr(f"{prefix}/{path.relative_to(CONTROL).as_posix()}", path.read_bytes())


CLIMBERS = ("../evil.md", "/etc/census-evil.md", "control/../../evil2.md")


def assert_nothing_escaped(tmp_path: Path) -> None:
    """No climbing member landed anywhere it could have: beside the archive, cwd, /etc."""
    for name in ("evil.md", "evil2.md"):
        assert not any(tmp_path.rglob(name)), name
        for folder in (tmp_path.parent, Path.cwd(), Path.cwd().parent):
            assert not (folder / name).exists(), folder / name
    assert not Path("/etc/census-evil.md").exists()


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_archive_members_that_climb_out_are_refused(
    tmp_path: Path, control_counts: dict[str, int], kind: str
) -> None:
    assert not Path("/etc/census-evil.md").exists()
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / f"corpus.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as zf:
            zip_control(zf)
            for name in CLIMBERS:
                # A ZipInfo keeps the name as given (writestr(str) would too; be explicit).
                zf.writestr(zipfile.ZipInfo(name), b"# escaped\n")
        assert [i.filename for i in zipfile.ZipFile(archive).infolist()][-3:] == list(CLIMBERS)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            add_control(tar)
            for name in CLIMBERS:
                add_member(tar, name, b"# escaped\n")
    con = crawl_unchanged([archive], holder, tmp_path / "out")
    label = str(archive)
    assert issues(con) == ordered(
        [(None, f"{label}:{name}", None, "unsafe-member") for name in CLIMBERS]
    )
    assert_control_read(con, control_counts, repo=f"corpus.{kind}:control")
    assert_nothing_escaped(tmp_path)


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_archive_links_out_of_the_archive_are_not_followed(
    tmp_path: Path, control_counts: dict[str, int], kind: str
) -> None:
    """A link to a file outside the archive (`/etc/passwd`) or to a folder that is no session is
    not followed; a hard link to another member is that member's file, read as tar wrote it."""
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / f"corpus.{kind}"
    inside = f"bad/{SESSION}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as zf:
            zip_control(zf)
            zip_control(zf, "bad")
            link = zipfile.ZipInfo(f"{inside}/basis/passwd.md")
            link.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(link, b"/etc/passwd")
        links = ["basis/passwd.md"]
    else:
        with tarfile.open(archive, "w") as tar:
            add_control(tar)
            add_control(tar, "bad")
            add_member(
                tar, f"{inside}/basis/passwd.md", type=tarfile.SYMTYPE, linkname="/etc/passwd"
            )
            add_member(
                tar, f"{inside}/basis/readme.md", type=tarfile.LNKTYPE, linkname="control/README.md"
            )
            add_member(tar, f"{inside}/basis/up", type=tarfile.SYMTYPE, linkname="../..")
        links = ["basis/passwd.md", "basis/up"]
    con = crawl_unchanged([archive], holder, tmp_path / "out")
    repo = f"corpus.{kind}:bad"
    assert issues(con) == [(repo, name, None, "unreadable") for name in links]
    assert all("link" in message for _, message in messages(con, "unreadable"))
    bad_id = snapshot_of(con, repo)
    unread = con.execute(
        "select file from files where snapshot_id = ? and sha256 is null order by file", [bad_id]
    ).fetchall()
    assert [row[0] for row in unread] == links  # listed, never read
    assert counts(con, bad_id)["forks"] == control_counts["forks"]
    assert_control_read(con, control_counts, repo=f"corpus.{kind}:control")


def test_truncated_tar_gz_keeps_the_members_before_the_fault(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    holder = tmp_path / "in"
    holder.mkdir()
    whole = tmp_path / "whole.tar.gz"
    filler = random.Random(7).randbytes(256 * 1024)  # incompressible: the cut lands inside it
    with tarfile.open(whole, "w:gz") as tar:
        add_control(tar)
        add_control(tar, "bad")
        add_member(tar, f"bad/{SESSION}/basis/filler.md", filler)
        add_member(tar, "late/README.md", b"# never reached\n")
    data = whole.read_bytes()
    archive = holder / "corpus.tar.gz"
    archive.write_bytes(data[: len(data) - 64 * 1024])
    con = crawl_unchanged([archive], holder, tmp_path / "out")
    # The member the stream broke in is listed but unreadable; each session of the archive
    # may have lost files after the cut, so each is in doubt as a whole (fail closed).
    assert issues(con) == ordered(
        [
            (None, f"{archive}:corpus.tar.gz", None, "bad-archive"),
            ("corpus.tar.gz:bad", ".", None, "archive-incomplete"),
            ("corpus.tar.gz:bad", "basis/filler.md", None, "unreadable"),
            ("corpus.tar.gz:control", ".", None, "archive-incomplete"),
        ]
    )
    bad_id = snapshot_of(con, "corpus.tar.gz:bad")
    assert counts(con, bad_id)["forks"] == control_counts["forks"]
    # The members before the fault are read in full.
    control_id = snapshot_of(con, "corpus.tar.gz:control")
    assert counts(con, control_id) | {"files": 0} == control_counts | {"files": 0}


def test_corrupt_zip_is_one_issue_and_other_roots_still_read(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    root, _ = make_root(tmp_path)
    shutil.rmtree(root / "bad")
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / "broken.zip"
    archive.write_bytes(b"PK\x03\x04 this is not a zip archive at all")
    out = tmp_path / "out"
    before = tree_state(holder)
    con = crawl_unchanged([root, archive], root, out)
    assert tree_state(holder) == before
    assert issues(con) == [(None, f"{archive}:broken.zip", None, "bad-archive")]
    assert_control_read(con, control_counts)


# ───────────────────────────── links, loops and special files on disk ─────────────────────────────


def test_symlink_loops_and_links_out_of_the_root(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    root, bad = make_root(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("## F99 — outside the root [open]\n")
    os.symlink("..", bad / "loop")  # back to docs/research: a loop
    os.symlink(".", bad / "basis" / "self")  # itself: a loop
    os.symlink(".", root / "spin")  # the root itself
    os.symlink(outside / "secret.md", bad / "basis" / "secret.md")  # a file out of the root
    os.symlink(outside, bad / "fragments" / "elsewhere")  # a folder out of the root
    os.symlink("b.md", bad / "basis" / "a.md")  # a two-link cycle
    os.symlink("a.md", bad / "basis" / "b.md")
    os.symlink(outside / "secret.md", bad / "forks.md.tmp")
    (bad / "forks.md").unlink()
    os.symlink(outside / "secret.md", bad / "forks.md")  # forks.md itself leaves the root
    elsewhere = copy_tree(CONTROL / SESSION, tmp_path / "elsewhere-brainstorm")
    # A whole session folder that lives out of the root: not followed, and never silent.
    os.symlink(elsewhere, root / "bad" / "docs" / "research" / "linked-brainstorm")
    con = crawl_unchanged([root], root, tmp_path / "out")
    label = str(root)
    assert issues(con) == ordered(
        [
            (None, f"{label}:bad/docs/research/linked-brainstorm", None, "unreadable"),
            (None, f"{label}:bad/{SESSION}/basis/self", None, "unreadable"),
            (None, f"{label}:bad/{SESSION}/loop", None, "unreadable"),
            (None, f"{label}:spin", None, "unreadable"),
            ("bad", "basis/a.md", None, "unreadable"),
            ("bad", "basis/b.md", None, "unreadable"),
            ("bad", "basis/secret.md", None, "unreadable"),
            ("bad", "forks.md", None, "unreadable"),
            ("bad", "forks.md.tmp", None, "unreadable"),
            ("bad", "fragments/elsewhere", None, "unreadable"),
        ]
    )
    by_file = dict(messages(con, "unreadable"))
    assert "loops back" in by_file[f"{label}:spin"]
    assert "out of the root" in by_file["forks.md"]
    assert "looping" in by_file["basis/a.md"]
    bad_id = snapshot_of(con, "bad")
    # Nothing from outside was read: no fork F99, no fork at all from the linked forks.md.
    assert counts(con, bad_id)["forks"] == 0
    assert snapshot_row(con, bad_id, "forks_exists") == (True,)
    # Nothing outside the root was read: no fork anywhere carries the outside file's title.
    leaked = con.execute("select count(*) from forks where title like '%outside the root%'")
    assert leaked.fetchone()[0] == 0
    assert_control_read(con, control_counts)


def test_fifo_and_a_link_to_a_fifo_do_not_hang(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    root, bad = make_root(tmp_path)
    (bad / "forks.md").unlink()
    os.mkfifo(bad / "forks.md")
    os.symlink("../forks.md", bad / "basis" / "pipe.md")
    con = crawl_unchanged([root], root, tmp_path / "out")
    assert issues(con) == [
        ("bad", "basis/pipe.md", None, "unreadable"),
        ("bad", "forks.md", None, "unreadable"),
    ]
    assert_control_read(con, control_counts)


@pytest.mark.skipif(
    os.geteuid() == 0, reason="running as root: chmod 000 does not stop root from reading a file"
)
def test_unreadable_file(tmp_path: Path, control_counts: dict[str, int]) -> None:
    root, bad = make_root(tmp_path)
    forks = bad / "forks.md"
    forks.chmod(0)
    try:
        con = crawl_unchanged([root], root, tmp_path / "out")
    finally:
        forks.chmod(0o644)
    assert issues(con) == [("bad", "forks.md", None, "unreadable")]
    assert counts(con, snapshot_of(con, "bad"))["forks"] == 0
    assert_control_read(con, control_counts)


# ───────────────────────────── roots that cannot be crawled ─────────────────────────────


def test_root_that_does_not_exist_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(RootError, match="does not exist"):
        crawl([str(tmp_path / "missing")], str(out), workers=1)
    assert not out.exists()


@pytest.mark.parametrize("what", ["missing", "plain-file"])
def test_cli_bad_root_is_one_line_and_exit_2(tmp_path: Path, what: str) -> None:
    root = tmp_path / what
    if what == "plain-file":
        root.write_text("not an archive\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["crawl", str(root), "--out", str(out)])
    assert result.exit_code == 2, result.output
    stderr = getattr(result, "stderr", None) or result.output
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"census: root '{root}'"), stderr
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, RootError)  # handled, not raised
    assert not out.exists()
