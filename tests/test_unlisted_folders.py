"""A folder the census may not list (spec §3.1, fail closed): what it holds is unknown, so the
rules that read a file in it fail, in detect and in crawl + check alike. Before, ops/ at mode
000 passed BS-SYNC-01 with a sync dispatched twice in it, and a harvested session passed
BS-HARVEST-01 with the folder of documents linking into it unlisted; the only trace was a
root-level row.

Root reads whatever the mode, so as root the census runs under setpriv, without the
capabilities that override file modes (as tests/test_os_errors.py does)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.conftest import FIXTURES

CHECKOUT = FIXTURES / "example" / "acme-checkout"
RESEARCH = "docs/research/saved-carts-brainstorm"
HISTORY = "docs/history/brainstorms/address-validation"


def _census(*args: str) -> subprocess.CompletedProcess[str]:
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root ignores file modes, and there is no setpriv to drop that")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [*prefix, sys.executable, "-m", "pipeline.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    repo = tmp_path / "root" / "repo"
    for session in (RESEARCH, HISTORY):
        shutil.copytree(CHECKOUT / session, repo / session)
    guide = repo / "docs" / "guides" / "guide.md"
    guide.parent.mkdir(parents=True)
    guide.write_text("# Guide\n\nSee [it](../history/brainstorms/address-validation/thesis.md).\n")
    yield repo
    for folder in (repo / RESEARCH / "ops", repo / RESEARCH, guide.parent):
        folder.chmod(0o755)


def _failed(out: Path) -> set[tuple[str, str]]:
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    rows = con.execute("SELECT topic, rule_id FROM statuses WHERE status = 'fail'").fetchall()
    return {(t, r) for t, r in rows}


def _checked(root: Path, out: Path) -> None:
    assert _census("crawl", str(root), "--out", str(out)).returncode == 0
    assert _census("check", "--out", str(out)).returncode in (0, 1)


def test_ops_not_listed_fails_the_rules_that_read_it(repo: Path, tmp_path: Path) -> None:
    (repo / RESEARCH / "ops").chmod(0)
    detected = _census("detect", str(repo / RESEARCH))
    assert detected.returncode == 1, detected.stderr
    lines = detected.stdout.splitlines()
    for rule in ("BS-SYNC-01", "BS-SYNC-02", "BS-OPS-01", "BS-MANIFEST-01"):
        assert f"{rule} fail ops/ could not read: cannot list directory: Permission denied" in (
            lines
        )
    assert "note ops/ cannot list directory: Permission denied" in lines
    _checked(repo.parent, tmp_path / "out")
    failed = _failed(tmp_path / "out")
    assert {("saved-carts", "BS-SYNC-01"), ("saved-carts", "BS-MANIFEST-01")} <= failed
    con = duckdb.connect(str(tmp_path / "out" / "census.duckdb"), read_only=True)
    issues = con.execute("SELECT snapshot_id IS NULL, file, code FROM parse_issues").fetchall()
    assert issues == [(False, "ops/", "unreadable")], "the session's own issue, once"


def test_a_session_folder_not_listed_fails_every_rule(repo: Path, tmp_path: Path) -> None:
    (repo / RESEARCH).chmod(0)
    _checked(repo.parent, tmp_path / "out")
    failed = {r for t, r in _failed(tmp_path / "out") if t == "saved-carts"}
    assert {"BS-STATE-01", "BS-THESIS-01", "BS-FORK-01", "BS-SYNC-01"} <= failed


def test_documents_not_listed_fail_the_harvest_link_rule(repo: Path, tmp_path: Path) -> None:
    readable = _census("detect", str(repo / HISTORY), "--gate", "move")
    assert "BS-HARVEST-01 fail" in readable.stdout, "the guide links into the folder"
    (repo / "docs" / "guides").chmod(0)
    detected = _census("detect", str(repo / HISTORY), "--gate", "move")
    assert detected.returncode == 1
    assert "BS-HARVEST-01 fail /docs/guides could not read:" in detected.stdout
    _checked(repo.parent, tmp_path / "out")
    assert ("address-validation", "BS-HARVEST-01") in _failed(tmp_path / "out")


def test_a_root_the_user_cannot_read_is_refused(tmp_path: Path) -> None:
    """A root at mode 000 was a night of 0 sessions, exit 0, with a hint to give a folder
    above the repository; an archive so, a "corrupt" archive. Both are one line, exit 2."""
    root = tmp_path / "root"
    shutil.copytree(CHECKOUT, root / "acme-checkout")
    archive = shutil.make_archive(str(tmp_path / "corpus"), "zip", root)
    for path in (root, Path(archive)):
        path.chmod(0)
        try:
            done = _census("crawl", str(path), "--out", str(tmp_path / "out"))
        finally:
            path.chmod(0o755)
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            f"census: permission denied on root {str(path)!r}; give this user access to it\n"
        )
    assert not (tmp_path / "out").exists(), "refused before any write"
