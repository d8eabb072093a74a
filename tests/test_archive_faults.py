"""Archives that break while read (spec §12, §3.1): never a crash, never a silent loss.

Each test builds a real archive in tmp_path from two copies of the control repository
(fixtures/cases/base/open/repo, as `first/` and `second/`), spoils it, and crawls it beside a
healthy directory root (`good/`). The crawl must not raise, the directory root must be read
in full, the fault must be a `bad-archive` issue, and when members may be missing every
session found in the archive carries an `archive-incomplete` issue on its whole folder.
"""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import tarfile
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from pipeline.check import check
from tests.conftest import copy_tree
from tests.test_bad_input import (
    CONTROL,
    SESSION,
    add_control,
    assert_control_read,
    counts,
    crawl_unchanged,
    issues,
    snapshot_of,
    zip_control,
)

MiB = 1024 * 1024
PREFIXES = ("first", "second")


@pytest.fixture(scope="module")
def control_counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """Rows per table for the control session crawled alone: what 'read in full' means."""
    where = tmp_path_factory.mktemp("control")
    copy_tree(CONTROL, where / "root" / "control")
    con = crawl_unchanged([where / "root"], where / "root", where / "out")
    found = counts(con, snapshot_of(con, "control"))
    assert found["forks"] > 0 and found["ledger"] > 0 and issues(con) == []
    return found


def crawl_beside_good(tmp_path: Path, archive_name: str, data: bytes) -> tuple[Any, Path]:
    """`data` written as in/`archive_name`, crawled with the directory root in/good, then
    checked; a DuckDB connection over OUT and the archive's path."""
    holder = tmp_path / "in"
    copy_tree(CONTROL, holder / "good")
    archive = holder / archive_name
    archive.write_bytes(data)
    out = tmp_path / "out"
    con = crawl_unchanged([holder / "good", archive], holder, out)
    check(str(out))
    return con, archive


def tar_bytes() -> tuple[bytes, dict[str, tarfile.TarInfo]]:
    """An uncompressed tar of the two copies and a late member; its members by name."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for prefix in PREFIXES:
            add_control(tar, prefix)
        info = tarfile.TarInfo("late/README.md")
        info.size = 6
        tar.addfile(info, io.BytesIO(b"# late"))
    data = buffer.getvalue()
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = {m.name: m for m in tar.getmembers()}
    return data, members


def gzip_cut(data: bytes) -> bytes:
    """`data` gzipped with no trailer, as a copy stopped mid-way leaves it."""
    stream = zlib.compressobj(9, zlib.DEFLATED, 31)
    return stream.compress(data) + stream.flush(zlib.Z_SYNC_FLUSH)


def issue_rows(con: Any, code: str) -> list[tuple[Any, ...]]:
    """(repo or None, file, line, rule_id, message) of every issue with `code`."""
    rows = con.execute(
        """
        select o.repo, i.file, i.line, i.rule_id, i.message
        from parse_issues i
        left join (select distinct snapshot_id, repo from observations) o using (snapshot_id)
        where i.code = ?
        order by all
        """,
        [code],
    ).fetchall()
    return [tuple(row) for row in rows]


def archive_repos(con: Any, archive: Path) -> set[str]:
    rows = con.execute("select distinct repo from observations").fetchall()
    return {row[0] for row in rows if row[0].startswith(f"{archive.name}:")}


def assert_incomplete(con: Any, archive: Path, why: str, repos: set[str]) -> None:
    """The archive is one bad-archive issue, and each of its sessions is in doubt, whole."""
    faults = issue_rows(con, "bad-archive") + issue_rows(con, "archive-too-large")
    assert [row[:2] for row in faults] == [(None, f"{archive}:{archive.name}")]
    assert archive_repos(con, archive) == repos
    message = f"the archive {archive.name} is incomplete ({why}): this session may have lost files"
    assert issue_rows(con, "archive-incomplete") == [
        (repo, ".", None, None, message) for repo in sorted(repos)
    ]
    for repo in repos:
        snapshot = snapshot_of(con, repo)
        found = con.execute(
            "select count(*) from parse_issues where snapshot_id = ? and code = ?",
            [snapshot, "archive-incomplete"],
        ).fetchone()[0]
        assert found == 1, repo


@pytest.mark.parametrize("where", ["at-a-header", "inside-a-header", "inside-data"])
def test_tar_gz_cut_short_marks_every_session_incomplete(
    tmp_path: Path, control_counts: dict[str, int], where: str
) -> None:
    data, members = tar_bytes()
    last = members[f"second/{SESSION}/thesis.md"]
    cut = {
        "at-a-header": last.offset,
        "inside-a-header": last.offset + 100,
        "inside-data": last.offset_data + 10,
    }[where]
    con, archive = crawl_beside_good(tmp_path, "cut.tar.gz", gzip_cut(data[:cut]))
    assert_control_read(con, control_counts, repo="good")
    assert_incomplete(con, archive, "cut short", {"cut.tar.gz:first", "cut.tar.gz:second"})
    message = issue_rows(con, "bad-archive")[0][4]
    assert "cut short" in message and "lost" in message
    # The members before the cut are read: the first copy's rows are all there.
    assert counts(con, snapshot_of(con, "cut.tar.gz:first"))["forks"] == control_counts["forks"]


def test_tar_with_a_corrupt_header_partway_marks_every_session_incomplete(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    data, members = tar_bytes()
    spoiled = bytearray(data)
    at = members[f"second/{SESSION}/thesis.md"].offset + 148  # the header's checksum
    spoiled[at : at + 6] = b"999999"
    con, archive = crawl_beside_good(tmp_path, "corrupt.tar", bytes(spoiled))
    assert_control_read(con, control_counts, repo="good")
    repos = {"corrupt.tar:first", "corrupt.tar:second"}
    assert_incomplete(con, archive, "corrupt", repos)


def test_archive_stopped_at_the_size_limit_marks_every_session_incomplete(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    data, members = tar_bytes()
    body = data[: members["late/README.md"].offset]
    # A header that claims more than the limit (64 MiB for a small archive): reading stops.
    huge = tarfile.TarInfo(f"second/{SESSION}/basis/huge.md")
    huge.size = 65 * MiB
    stream = zlib.compressobj(9, zlib.DEFLATED, 31)
    packed = stream.compress(body + huge.tobuf(tarfile.USTAR_FORMAT)) + stream.flush()
    con, archive = crawl_beside_good(tmp_path, "bomb.tar.gz", packed)
    assert_control_read(con, control_counts, repo="good")
    repos = {"bomb.tar.gz:first", "bomb.tar.gz:second"}
    assert_incomplete(con, archive, "stopped at the size limit", repos)


def zip_bytes(tmp_path: Path) -> bytes:
    target = tmp_path / "plain.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for prefix in PREFIXES:
            zip_control(archive, prefix)
    return target.read_bytes()


def spoil_member(data: bytes, name: str, how: str) -> bytes:
    """The zip with one member's compressed bytes flipped, or its method made unknown."""
    spoiled = bytearray(data)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    if how == "flipped":
        name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 :][:4])
        start = info.header_offset + 30 + name_len + extra_len
        for i in range(start + 5, start + 41):
            spoiled[i] ^= 0x55
    else:
        # The central directory's record (the name's last copy is in it) names method 98.
        record = data.rfind(name.encode()) - 46
        assert data[record : record + 4] == b"PK\x01\x02"
        spoiled[record + 10 : record + 12] = struct.pack("<H", 98)
    return bytes(spoiled)


@pytest.mark.parametrize("how", ["flipped", "unknown-method"])
def test_zip_member_that_cannot_be_read_is_unread_and_the_rest_is_read(
    tmp_path: Path, control_counts: dict[str, int], how: str
) -> None:
    name = f"second/{SESSION}/forks.md"
    data = spoil_member(zip_bytes(tmp_path), name, how)
    con, archive = crawl_beside_good(tmp_path, "spoiled.zip", data)
    assert_control_read(con, control_counts, repo="good")
    assert_control_read(con, control_counts, repo="spoiled.zip:first")
    assert [row[:2] for row in issue_rows(con, "bad-archive")] == [(None, f"{archive}:{name}")]
    # The member is unread, so the rule that needs it fails (spec §3.1); the rest is read.
    assert [row[:4] for row in issue_rows(con, "unreadable")] == [
        ("spoiled.zip:second", "forks.md", None, "BS-FORK-01")
    ]
    second = counts(con, snapshot_of(con, "spoiled.zip:second"))
    assert second["forks"] == 0 and second["ledger"] == control_counts["ledger"]
    # Every member is listed up front in a zip: nothing is missing, only that one is unread.
    assert issue_rows(con, "archive-incomplete") == []


@pytest.mark.skipif(shutil.which("zip") is None, reason="needs the zip command")
def test_encrypted_zip_is_unread_and_other_roots_are_read(
    tmp_path: Path, control_counts: dict[str, int]
) -> None:
    source = copy_tree(CONTROL, tmp_path / "src" / "first")
    target = tmp_path / "enc.zip"
    subprocess.run(
        ["zip", "-qr", "-P", "secret", str(target), "first"], cwd=source.parent, check=True
    )
    con, archive = crawl_beside_good(tmp_path, "enc.zip", target.read_bytes())
    assert_control_read(con, control_counts, repo="good")
    faults = issue_rows(con, "bad-archive")
    assert f"{archive}:first/{SESSION}/forks.md" in [row[1] for row in faults]
    assert all("encrypted" in row[4] for row in faults)
    unread = {row[1]: row[3] for row in issue_rows(con, "unreadable") if row[0]}
    assert unread["forks.md"] == "BS-FORK-01" and unread["ledger.md"] == "BS-LEDGER-01"


@pytest.mark.parametrize(
    ("name", "keep"),
    [("empty.tar.gz", 0), ("head.tar.gz", 10), ("head.tar", 300), ("head.tar.xz", 20)],
)
def test_an_archive_cut_before_its_first_member_says_so(
    tmp_path: Path, control_counts: dict[str, int], name: str, keep: int
) -> None:
    """A download stopped in its first bytes: the issue said "corrupt at its start (empty
    file): members after it are lost; the members read before it are kept" (found by a hunt),
    of an archive that is cut short and of which no member was read."""
    import bz2
    import lzma

    data, _ = tar_bytes()
    packed = {".gz": gzip_cut, ".xz": lzma.compress, ".bz2": bz2.compress}
    whole = packed.get(Path(name).suffix, lambda raw: raw)(data)
    con, archive = crawl_beside_good(tmp_path, name, whole[:keep])
    assert_control_read(con, control_counts, repo="good")
    [(_, file, _, _, message)] = issue_rows(con, "bad-archive")
    assert file == f"{archive}:{archive.name}"
    assert "cut short at its start" in message, message
    assert "no member could be read" in message and "before it" not in message, message


@pytest.mark.parametrize(
    ("kind", "name"),
    [("zip", "mislabelled.tar.gz"), ("tar.gz", "other.zip"), ("tar", "PK.tar")],
)
def test_an_archive_named_as_another_kind_is_read_as_what_it_holds(
    tmp_path: Path, control_counts: dict[str, int], kind: str, name: str
) -> None:
    """A zip renamed .tar.gz (or a .tar.gz renamed .zip) was "corrupt at its start" and none of
    its sessions was read (found by a hunt): it is read by its first bytes, as `file` says."""
    holder = tmp_path / "made"
    holder.mkdir()
    made = holder / f"corpus.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(made, "w", zipfile.ZIP_DEFLATED) as zf:
            zip_control(zf, "first")
    else:
        with tarfile.open(made, "w:gz" if kind == "tar.gz" else "w") as tar:
            if kind == "tar":
                # A tar whose first member is named like a zip's first bytes is still a tar.
                info = tarfile.TarInfo("PK\x03\x04")
                tar.addfile(info, io.BytesIO(b""))
            add_control(tar, "first")
    con, _ = crawl_beside_good(tmp_path, name, made.read_bytes())
    assert issue_rows(con, "bad-archive") == []
    assert_control_read(con, control_counts, repo=f"{name}:first")
    assert_control_read(con, control_counts, repo="good")
