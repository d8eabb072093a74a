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


def _dangling_git(repo: Path, tmp_path: Path) -> None:
    """The repository's git directory moved away, its `.git` a link to where it is not."""
    (repo / ".git").rename(tmp_path / "moved.git")
    (repo / ".git").symlink_to(tmp_path / "unmounted" / "repo.git")


def test_a_dot_git_link_that_leads_nowhere_fails_closed(tmp_path: Path) -> None:
    """A `.git` that is a link git cannot follow (its target on a volume not mounted) is a
    repository git cannot read. Before, crawl and detect looked for `.git` with exists(),
    which follows the link: BS-OPS-02 was skipped as "no git context" and a tracked ops/ file
    unseen (found by a hunt)."""
    repo = _repo(tmp_path)
    _dangling_git(repo, tmp_path)
    assert _ops_02(repo, tmp_path) == ("fail", ["git-unreadable"], "fail")


def test_a_dot_git_link_that_leads_nowhere_inside_a_checkout_fails_closed(tmp_path: Path) -> None:
    """Inside a larger checkout, git passes over a `.git` it cannot open and reads the
    checkout above: the repository's own git must fail, not the outer index answer for it
    (which lists none of its files, so BS-OPS-02 passed; found by a hunt)."""
    repo = _repo(tmp_path)
    _dangling_git(repo, tmp_path)
    make_git_repo(tmp_path)
    assert _ops_02(repo, tmp_path) == ("fail", ["git-unreadable"], "fail")


def test_a_dot_git_link_that_leads_nowhere_under_a_path_with_a_colon_fails_closed(
    tmp_path: Path,
) -> None:
    """git was pinned to the repository's folder by GIT_CEILING_DIRECTORIES, a list separated
    by ':': under a folder named with one the ceiling named nothing, git read the checkout
    above for a `.git` it could not open, and BS-OPS-02 passed again (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "x:y" / "repo")
    make_git_repo(repo)
    _dangling_git(repo, tmp_path)
    make_git_repo(tmp_path)
    assert _ops_02(repo, tmp_path) == ("fail", ["git-unreadable"], "fail")
