"""Archive members named with `..` anywhere are refused (docs/errors.md, `unsafe-member`).

tests/test_bad_input.py covers names that climb out of the archive (`../x`, `/etc/x`,
`a/../../x`); these names stay inside once normalised, so only the rule "a `..` segment
anywhere is refused" stops them. It matters: `control/docs/../docs/…/forks.md` normalises to
the control session's own forks.md, and, were it read, would replace that file's content.
"""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.check import check
from tests.test_bad_input import (  # noqa: F401  (control_counts is a fixture)
    CONTROL,
    SESSION,
    add_control,
    add_member,
    assert_control_read,
    control_counts,
    crawl_unchanged,
    issues,
    ordered,
    zip_control,
)

SHADOW = f"control/docs/../{SESSION}/forks.md"
INSIDE = ("control/../control/README.md", SHADOW, "control/docs/..")
HOSTILE_FORKS = b"# Forks\n\n## F99 - shadowed [open]\n- Raised by: user\n- Closes when: never\n"


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_dot_dot_inside_a_member_name_is_refused(
    tmp_path: Path,
    control_counts: dict[str, int],  # noqa: F811
    kind: str,
) -> None:
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / f"corpus.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as zf:
            zip_control(zf)
            for name in INSIDE:
                zf.writestr(zipfile.ZipInfo(name), HOSTILE_FORKS)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            add_control(tar)
            for name in INSIDE:
                add_member(tar, name, HOSTILE_FORKS)
    con = crawl_unchanged([archive], holder, tmp_path / "out")
    assert issues(con) == ordered(
        [(None, f"{archive}:{name}", None, "unsafe-member") for name in INSIDE]
    )
    # The control's forks.md is its own, not the member that named it with `..`.
    assert con.execute("SELECT count(*) FROM forks WHERE fork_id = 'F99'").fetchone()[0] == 0
    assert_control_read(con, control_counts, repo=f"corpus.{kind}:control")


def test_utf8_names_without_the_zip_flag_read_as_utf8(tmp_path: Path) -> None:
    """Info-ZIP on Linux and macOS writes UTF-8 names without the UTF-8 flag: the topic is
    `café` from the zip as from the directory (zipfile alone gave `caf├⌐`). The zip is made
    with ASCII names of the same byte length, then the names' bytes are set, as zip(1) does."""
    from pipeline.crawl import crawl
    from pipeline.engine import connect
    from pipeline.store import Out
    from tests.conftest import FIXTURES

    source = FIXTURES / "cases" / "base" / "open" / "repo" / "docs/research/demo-brainstorm"
    archive = tmp_path / "repo.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                name = f"repo/docs/research/cafe!-brainstorm/{path.relative_to(source)}"
                handle.write(path, name)
    raw = archive.read_bytes()
    archive.write_bytes(raw.replace(b"cafe!-brainstorm", "café-brainstorm".encode()))
    assert not any(i.flag_bits & 0x800 for i in zipfile.ZipFile(archive).infolist())
    crawl([str(archive)], str(tmp_path / "out"), workers=1)
    topics = connect(Out(tmp_path / "out")).execute("SELECT topic, path FROM observations")
    assert topics.fetchall() == [("café", "docs/research/café-brainstorm")]


def test_a_fifo_named_like_an_archive_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Opening a FIFO to read it waits for a writer for ever: exit 2 at once instead."""
    import os

    from typer.testing import CliRunner

    from pipeline.cli import app

    os.mkfifo(tmp_path / "pipe.tar")
    result = CliRunner().invoke(
        app, ["crawl", str(tmp_path / "pipe.tar"), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "not a regular file" in result.output, result.output


def test_a_link_member_standing_for_sessions_is_an_issue_not_a_silence(tmp_path: Path) -> None:
    """Links in an archive are not followed. One standing where a session folder or a docs/
    would be held sessions no one saw: 0 issues, where the same shape as a folder says so."""
    import io

    from pipeline.crawl import crawl
    from pipeline.engine import connect
    from pipeline.store import Out

    archive = tmp_path / "links.tar"
    with tarfile.open(archive, "w") as tar:
        readme = tarfile.TarInfo("repo/README.md")
        readme.size = 3
        tar.addfile(readme, io.BytesIO(b"hi\n"))
        for name, target in (
            ("repo/docs/research/mirror-brainstorm", "saved-carts-brainstorm"),
            ("repo2/docs", "/srv/other/docs"),
            ("repo/node_modules/.bin/tool", "../tool/cli.js"),
        ):
            link = tarfile.TarInfo(name)
            link.type, link.linkname = tarfile.SYMTYPE, target
            tar.addfile(link)
    crawl([str(archive)], str(tmp_path / "out"), workers=1)
    issues = connect(Out(tmp_path / "out")).execute(
        "SELECT file, code FROM parse_issues ORDER BY file"
    )
    assert issues.fetchall() == [
        (f"{archive}:repo/docs/research/mirror-brainstorm", "unreadable"),
        (f"{archive}:repo2/docs", "unreadable"),
    ], "a link that can stand for no session is no issue"


def test_a_link_member_says_the_members_under_its_name_are_read(tmp_path: Path) -> None:
    """A link member `repo/docs/research` followed by real members under that name: the issue
    said "no session under it is read", found by a hunt, yet the session was read and counted.
    The members are inside the archive (spec §2, §12: nothing read outside the root, nothing
    followed): they are read, and the issue now says so."""
    from pipeline.crawl import crawl
    from pipeline.engine import connect
    from pipeline.store import Out
    from tests.conftest import FIXTURES

    archive = tmp_path / "linked.tar"
    session = FIXTURES / "cases" / "base" / "open" / "repo" / SESSION
    with tarfile.open(archive, "w") as tar:
        link = tarfile.TarInfo("repo/docs/research")
        link.type, link.linkname = tarfile.SYMTYPE, "../../elsewhere"
        tar.addfile(link)
        tar.add(session, arcname=f"repo/{SESSION}")
    summary = crawl([str(archive)], str(tmp_path / "out"), workers=1)
    con = connect(Out(tmp_path / "out"))
    issues = con.execute("SELECT file, code, message FROM parse_issues WHERE run_id IS NOT NULL")
    [(file, code, message)] = issues.fetchall()
    assert (file, code) == (f"{archive}:repo/docs/research", "unreadable")
    assert summary.sessions == 1
    assert "no session under it is read" not in message
    assert "members the archive holds under its name are read" in message


def _zip_tree(root: Path, archive: Path) -> None:
    """A zip of `root` as Info-ZIP's `zip -ry` writes it: symbolic links stored as links."""
    import os
    import stat

    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(root.rglob("*")):
            name = f"{root.name}/{path.relative_to(root).as_posix()}"
            if path.is_symlink():
                link = zipfile.ZipInfo(name)
                link.external_attr = (stat.S_IFLNK | 0o777) << 16
                zf.writestr(link, os.readlink(path))
            elif path.is_file():
                zf.write(path, name)


def _same_as_a_folder(root: Path, archive: Path, out: Path) -> list[tuple[object, ...]]:
    """The rule statuses of `root` read as a folder, asserted equal to those of `archive`."""
    from tests.conftest import checked_rows

    query = "SELECT path, rule_id, status FROM statuses ORDER BY ALL"
    as_folder = checked_rows(root, out / "folder", query)
    assert checked_rows(archive, out / "archive", query) == as_folder
    issues = "SELECT file, code FROM parse_issues ORDER BY ALL"
    assert checked_rows(archive, out / "archive", issues) == []
    return as_folder


def test_a_hard_link_in_a_tar_reads_as_the_file_it_names(tmp_path: Path) -> None:
    """Two sessions whose ops/.gitignore are one file (two names, one inode): tar writes the
    second name as a hard-link member, which was not read, so that session failed BS-OPS-01 as a
    .tar.gz while the same tree passed as a folder (found by a hunt)."""
    import os

    from tests.conftest import FIXTURES, copy_tree

    root = tmp_path / "root"
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    other = copy_tree(repo / SESSION, repo / "docs" / "research" / "other-brainstorm")
    (other / "ops" / ".gitignore").unlink()
    os.link(repo / SESSION / "ops" / ".gitignore", other / "ops" / ".gitignore")
    archive = tmp_path / "root.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="root")
    with tarfile.open(archive) as tar:
        assert any(member.islnk() for member in tar.getmembers())
    rows = _same_as_a_folder(root, archive, tmp_path / "out")
    assert [r[2] for r in rows if r[1] == "BS-OPS-01"] == ["pass", "pass"]


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_links_inside_an_archive_read_as_in_a_folder(tmp_path: Path, kind: str) -> None:
    """A file link inside the root (thesis.md -> thesis-v2.md) and a session folder that is a
    link to a folder inside the root are read through the link in a folder crawl; in an archive
    the file read as missing (BS-THESIS-01 failed) and the session was lost (found by a hunt)."""
    import os

    from tests.conftest import FIXTURES, copy_tree

    root = tmp_path / "root"
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    (repo / SESSION / "thesis.md").rename(repo / SESSION / "thesis-v2.md")
    os.symlink("thesis-v2.md", repo / SESSION / "thesis.md")
    copy_tree(repo / SESSION, repo / "sessions" / "linked")
    os.symlink("../../sessions/linked", repo / "docs" / "research" / "linked-brainstorm")
    archive = tmp_path / f"root.{kind}"
    if kind == "zip":
        _zip_tree(root, archive)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(root, arcname="root")
    rows = _same_as_a_folder(root, archive, tmp_path / "out")
    assert {r[0] for r in rows} == {SESSION, "docs/research/linked-brainstorm"}
    assert [r[2] for r in rows if r[1] == "BS-THESIS-01"] == ["pass", "pass"]


def test_session_folder_links_cannot_multiply_an_archive_without_bound(tmp_path: Path) -> None:
    """Each session folder link reads its folder again, so a small tar of many links to one
    large folder would list millions of entries: links add at most archive.MIN_ALIASED entries
    (or twice what the archive lists), and the links past that are noted, not followed."""
    import io

    from pipeline.engine import connect
    from pipeline.sources.archive import ALIAS_LIMIT, MIN_ALIASED
    from pipeline.store import Out
    from tests.conftest import checked_rows

    files, links = 120, 100
    assert files * links > MIN_ALIASED
    archive = tmp_path / "links.tar"
    with tarfile.open(archive, "w") as tar:
        for n in range(files):
            info = tarfile.TarInfo(f"repo/sessions/big/notes-{n}.md")
            info.size = 2
            tar.addfile(info, io.BytesIO(b"x\n"))
        for n in range(links):
            link = tarfile.TarInfo(f"repo/docs/research/t{n}-brainstorm")
            link.type, link.linkname = tarfile.SYMTYPE, "../../sessions/big"
            tar.addfile(link)
    issues = checked_rows(archive, tmp_path / "out", "SELECT message FROM parse_issues")
    sessions = connect(Out(tmp_path / "out")).execute("SELECT count(*) FROM sessions").fetchone()[0]
    followed = sum(ALIAS_LIMIT not in message for (message,) in issues)
    assert followed == 0 and 0 < sessions < links  # each link not followed is noted
    assert sessions * files <= MIN_ALIASED < (sessions + 1) * files
    assert len(issues) == links - sessions


def test_a_second_pass_for_links_stops_where_the_first_pass_stopped(tmp_path: Path) -> None:
    """A session folder link after the members it needs makes a second pass over a compressed
    tar, which went on to the end of the stream: past a bomb the first pass had stopped at, it
    decompressed the whole bomb (a 339-byte .tar.bz2 took minutes) and read members the first
    pass never listed (found by a hunt). It now ends at the last member it needs."""
    import io

    from pipeline.sources.archive import MIN_EXPANSION_BYTES, ArchiveTree

    def add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))

    archive = tmp_path / "bomb.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        add(tar, "repo/store/a/ops/x.bin", b"first\n")
        link = tarfile.TarInfo(f"repo/{SESSION}")
        link.type, link.linkname = tarfile.SYMTYPE, "../../store/a"
        tar.addfile(link)
        add(tar, "repo/big.bin", bytes(MIN_EXPANSION_BYTES + 1))
        add(tar, "repo/store/a/ops/x.bin", b"past the bomb\n")
    tree = ArchiveTree(str(archive))
    list(tree.blocks())
    assert any(code == "archive-too-large" for _, code, _ in tree.issues)
    assert tree.read(f"repo/{SESSION}/ops/x.bin") == b"first\n"


def test_a_session_folder_link_does_not_hide_the_members_under_its_name(tmp_path: Path) -> None:
    """A tar holding a session folder link and, under the link's own name, members of its own
    (GNU tar refuses them, Python's tarfile writes them through the link): the link's target was
    read in their place, so a session whose own files lack thesis.md passed BS-THESIS-01 with
    no issue (found by a hunt). Its members are read as they are, and the link is noted."""
    import io

    from tests.conftest import FIXTURES, checked_rows

    session = FIXTURES / "cases" / "base" / "open" / "repo" / SESSION
    archive = tmp_path / "shadow.tar"
    with tarfile.open(archive, "w") as tar:
        link = tarfile.TarInfo(f"repo/{SESSION}")
        link.type, link.linkname = tarfile.SYMTYPE, "../../store/good"
        tar.addfile(link)
        tar.add(session, arcname="repo/store/good")
        for path in sorted(session.rglob("*")):
            if path.is_file() and path.name != "thesis.md":
                info = tarfile.TarInfo(f"repo/{SESSION}/{path.relative_to(session).as_posix()}")
                info.size = path.stat().st_size
                tar.addfile(info, io.BytesIO(path.read_bytes()))
    query = "SELECT status FROM statuses WHERE rule_id = 'BS-THESIS-01'"
    assert checked_rows(archive, tmp_path / "out", query) == [("fail",)]
    issues = checked_rows(archive, tmp_path / "out2", "SELECT file, code FROM parse_issues")
    assert issues == [(f"{archive}:repo/{SESSION}", "unreadable")]


def _crawl_with_forks_member(
    tmp_path: Path, kind: str, name: str, extra: dict[str, bytes] | None = None
) -> Any:
    """A crawl of an archive of the control repository whose forks.md (an open fork with no
    `Closes when:`) is the member `name`, and `extra` members after it: the crawl's
    connection to OUT."""
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / f"corpus.{kind}"
    members = {
        f"control/{p.relative_to(CONTROL).as_posix()}": p.read_bytes()
        for p in sorted(CONTROL.rglob("*"))
        if p.is_file() and p.name != "forks.md"
    }
    members[name] = b"# Forks\n\n## F1 - key? [open]\n"
    members.update(extra or {})
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as zf:
            for member, data in members.items():
                zf.writestr(zipfile.ZipInfo(member), data)
    else:
        with tarfile.open(archive, "w:gz") as tar:
            for member, data in members.items():
                add_member(tar, member, data)
    return crawl_unchanged([archive], holder, tmp_path / "out")


def _assert_fork_01_fails(out: Path) -> None:
    """After a check of OUT, its one session fails BS-FORK-01 at the session gate."""
    check(str(out))
    with duckdb.connect(str(out / "census.duckdb"), read_only=True) as db:
        fork_01 = db.execute(
            "SELECT status FROM statuses WHERE rule_id = 'BS-FORK-01' AND gate = 'session'"
        ).fetchone()
    assert fork_01 == ("fail",)


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_a_session_file_named_with_dot_dot_fails_its_session_closed(
    tmp_path: Path, kind: str
) -> None:
    """A member named with `..` that stays inside (`…/basis/../forks.md`) is refused, and the
    session holding no other member of that name shows the file it could not read. Before,
    the refusal was a root issue only ("climbs out of the archive", which it does not): the
    session read as if it had no forks.md, and its open fork with no `Closes when:` hid behind
    a clean verdict (found by a hunt)."""
    con = _crawl_with_forks_member(tmp_path, kind, f"control/{SESSION}/basis/../forks.md")
    assert con.execute(
        "SELECT code FROM parse_issues WHERE snapshot_id IS NOT NULL AND file = 'forks.md'"
    ).fetchall() == [("unreadable",)]
    refused = con.execute("SELECT message FROM parse_issues WHERE code = 'unsafe-member'")
    assert "climbs out" not in refused.fetchone()[0]
    con.close()
    _assert_fork_01_fails(tmp_path / "out")


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
@pytest.mark.parametrize("prefix", ["/", "../", "/tmp/../"])
def test_a_session_file_named_absolute_or_climbing_out_fails_its_session_closed(
    tmp_path: Path, kind: str, prefix: str
) -> None:
    """A member named `/control/…/forks.md` (written by `tar -P`) or `../control/…/forks.md` is
    refused, and the session where extraction puts it (GNU tar, bsdtar and unzip strip the
    leading `/`, GNU tar and unzip the leading `../`) shows the file it could not read. Before,
    the refusal was a root issue only: the session read as if it had no forks.md, and its open
    fork hid behind a clean verdict (found by a hunt)."""
    con = _crawl_with_forks_member(tmp_path, kind, f"{prefix}control/{SESSION}/forks.md")
    assert con.execute(
        "SELECT code FROM parse_issues WHERE snapshot_id IS NOT NULL AND file = 'forks.md'"
    ).fetchall() == [("unreadable",)]
    assert con.execute("SELECT count(*) FROM forks").fetchone() == (0,)
    con.close()
    _assert_fork_01_fails(tmp_path / "out")


def test_a_zip_made_on_windows_keeps_its_empty_folders(tmp_path: Path) -> None:
    """A zip written with `\\` separators (PowerShell's Compress-Archive, .NET before 4.6.1)
    names a folder `…\\fragments\\`: a folder, as unzip extracts it. Before, only its files'
    `\\` was read as a separator, so the folder was an empty file: a session folder so named
    vanished without a word (a folder without state.md is still a session, spec §2), and an
    empty `fragments\\` failed a healthy session's BS-ASPECT-01 as 'a file, not a folder'
    (found by a hunt)."""
    holder = tmp_path / "in"
    holder.mkdir()
    archive = holder / "corpus.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for p in sorted(CONTROL.rglob("*")):
            if p.is_file():
                name = "control\\" + p.relative_to(CONTROL).as_posix().replace("/", "\\")
                zf.writestr(zipfile.ZipInfo(name), p.read_bytes())
        for folder in (f"{SESSION}/fragments", "docs/research/empty-brainstorm"):
            zf.writestr(zipfile.ZipInfo("control\\" + folder.replace("/", "\\") + "\\"), b"")
    con = crawl_unchanged([archive], holder, tmp_path / "out")
    assert con.execute("SELECT path FROM observations ORDER BY path").fetchall() == [
        (SESSION,),
        ("docs/research/empty-brainstorm",),
    ]
    assert issues(con) == []
    con.close()
    check(str(tmp_path / "out"))
    with duckdb.connect(str(tmp_path / "out" / "census.duckdb"), read_only=True) as db:
        aspect_01 = db.execute(
            "SELECT status FROM statuses WHERE rule_id = 'BS-ASPECT-01' AND path = ?", [SESSION]
        ).fetchone()
    assert aspect_01 == ("pass",)


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
@pytest.mark.parametrize("below", ["notes.md", "old/notes.md"])
def test_a_member_that_is_a_file_and_a_folder_is_not_read(
    tmp_path: Path, kind: str, below: str
) -> None:
    """An archive holding `…/forks.md` and `…/forks.md/notes.md`: GNU tar extracts forks.md as
    the file, bsdtar as a folder. The census read the file and said nothing (found by a hunt);
    now the name is refused, and the rules reading forks.md fail."""
    name = f"control/{SESSION}/forks.md"
    con = _crawl_with_forks_member(tmp_path, kind, name, {f"{name}/{below}": b"# Notes\n"})
    assert con.execute(
        "SELECT file, code FROM parse_issues WHERE snapshot_id IS NOT NULL"
    ).fetchall() == [("forks.md", "unreadable")]
    archive = tmp_path / "in" / f"corpus.{kind}"
    assert con.execute(
        "SELECT file, code FROM parse_issues WHERE snapshot_id IS NULL"
    ).fetchall() == [(f"{archive}:{name}", "duplicate-member")]
    assert con.execute("SELECT count(*) FROM forks").fetchone() == (0,)
    con.close()
    _assert_fork_01_fails(tmp_path / "out")


def test_an_archive_named_through_a_symlink_is_the_archive_it_names(tmp_path: Path) -> None:
    """Its repositories are named by the archive itself, not by the name the crawl was given:
    a night that crawled `latest.tar.gz` (a link to the night's file) and one that crawled the
    file had two series of each session, and two shards given the two names split the night's
    sessions by different keys, so some were counted twice (found by a hunt)."""
    import os

    from pipeline.crawl import crawl
    from pipeline.engine import connect
    from pipeline.store import Out
    from tests.conftest import base_corpus

    root = base_corpus(tmp_path / "root", 4)
    archive = tmp_path / "night.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(root, arcname="root")
    os.symlink(archive.name, tmp_path / "latest.tar.gz")
    out = tmp_path / "out"
    crawl([str(tmp_path / "latest.tar.gz")], str(out), workers=1, shard=(1, 2), point="night")
    crawl([str(archive)], str(out), workers=1, shard=(2, 2), point="night")
    query = "SELECT count(*), count(DISTINCT session_key) FROM observations"
    assert connect(Out(out)).execute(query).fetchone() == (4, 4)
