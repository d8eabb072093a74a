"""A session in a git working tree whose git cannot be read (git not installed where the
census runs, a damaged index) fails BS-OPS-02 with a note: skipping it as "no git context"
made a tracked ops/ file invisible and the session clean (spec §3.1, fail closed)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.detect import detect
from tests.conftest import FIXTURES, copy_tree, make_git_repo

SESSION = "docs/research/demo-brainstorm"


def _repo(tmp_path: Path) -> Path:
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "corpus" / "repo")
    make_git_repo(repo)
    return repo


def _ops_02(repo: Path, tmp_path: Path) -> tuple[str, list[str], str]:
    found = detect(str(repo / SESSION), "session")
    outcome = next(o for o in found.outcomes if o.rule == "BS-OPS-02")
    out = tmp_path / "out"
    crawl([str(repo.parent)], str(out), workers=1)
    check(str(out))
    with duckdb.connect(str(out / "census.duckdb"), read_only=True) as con:
        checked = con.execute("SELECT status FROM statuses WHERE rule_id = 'BS-OPS-02'").fetchone()[
            0
        ]
    return outcome.status, [n["code"] for n in found.notes], checked


def test_a_readable_repository_passes(tmp_path: Path) -> None:
    assert _ops_02(_repo(tmp_path), tmp_path) == ("pass", [], "pass")


def test_git_missing_fails_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    assert _ops_02(repo, tmp_path) == ("fail", ["git-unreadable"], "fail")


def test_a_damaged_index_fails_closed(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".git" / "index").write_bytes(b"garbage")
    assert _ops_02(repo, tmp_path) == ("fail", ["git-unreadable"], "fail")
