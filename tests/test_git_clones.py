"""Clones that hold only part of a history, crawled with --git-history (spec §2, §12).

- A partial clone (`--filter=blob:none`) lacks old files' contents. Git would fetch them
  on demand, writing a pack into the root's .git (and reaching the network): the census
  never writes in what it reads, so a missing file is an `unreadable` parse issue instead,
  never an empty file.
- A shallow clone (`--depth 1`) lacks the commits before its boundary: a
  `history-incomplete` parse issue says so, and once deepened (`git fetch --unshallow`),
  the next night reads the history it now holds, though HEAD did not move.

Real repositories, cloned through git's file:// transport, and real crawls.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.parse.session import SERIES_RULES
from tests.conftest import FIXTURES, copy_tree, git

SESSION = "docs/research/demo-brainstorm"


def _upstream(tmp_path: Path) -> Path:
    """Three commits of one session: open, then its state edited twice."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "up")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    state = repo / SESSION / "state.md"
    for n in (2, 3):
        state.write_text(state.read_text() + f"\nEdit {n}.\n")
        git(repo, "commit", "-q", "-am", f"edit {n}")
    git(repo, "config", "uploadpack.allowfilter", "true")
    return repo


def _files(root: Path) -> dict[str, tuple[int, int]]:
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            st = os.stat(os.path.join(folder, name))
            found[os.path.join(folder, name)] = (st.st_size, st.st_mtime_ns)
    return found


def _issues(out: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    return con.execute("SELECT file, code FROM parse_issues ORDER BY ALL").fetchall()


def test_a_partial_clone_is_read_without_fetching(tmp_path: Path) -> None:
    upstream = _upstream(tmp_path)
    clone = tmp_path / "corpus" / "clone"
    clone.parent.mkdir()
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{upstream}", str(clone))
    before = _files(clone)
    out = tmp_path / "out"
    summary = crawl([str(clone.parent)], str(out), workers=1, git_history=True)
    assert _files(clone) == before, "the crawl wrote into the clone's .git (a lazy fetch)"
    # The two older state.md contents are not in the clone: each is a parse issue.
    assert _issues(out).count(("state.md", "unreadable")) == 2
    assert summary.history == 3  # one snapshot per commit, HEAD's included


def test_a_commit_a_partial_clone_cannot_read_fails_the_series_rule(tmp_path: Path) -> None:
    """open, stopping, open again: the clone lacks the middle commit's state.md, so the step
    back cannot be seen, and cannot be ruled out either. Skipping the commit compared open
    with open, and BS-STATE-01 passed where a full clone fails it (found by a hunt)."""
    upstream = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "up")
    git(upstream, "init", "-q")
    git(upstream, "config", "uploadpack.allowfilter", "true")
    state = upstream / SESSION / "state.md"
    opened = state.read_text()
    assert "- Status: open" in opened
    for n, text in enumerate((opened, opened.replace("Status: open", "Status: stopping"), opened)):
        state.write_text(text)
        git(upstream, "add", "-A")
        git(
            upstream,
            "commit",
            "-q",
            "-m",
            f"c{n}",
            env={"GIT_COMMITTER_DATE": f"2026-07-0{n + 1}T12:00:00Z"},
        )
    found = {}
    for kind in ("partial", "full"):
        clone = tmp_path / kind / "clone"
        clone.parent.mkdir()
        extra = ["--filter=blob:none"] if kind == "partial" else []
        git(tmp_path, "clone", "-q", *extra, f"file://{upstream}", str(clone))
        out = tmp_path / f"out-{kind}"
        crawl([str(clone.parent)], str(out), workers=1, git_history=True)
        check(str(out))
        con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
        found[kind] = (
            con.execute(
                "SELECT rule_id, failed FROM rule_counts WHERE rule_id = 'BS-STATE-01'"
            ).fetchall(),
            con.execute("SELECT message FROM series_findings").fetchall(),
        )
        con.close()
    assert found["full"][0] == [("BS-STATE-01", 1)]
    assert found["partial"][0] == [("BS-STATE-01", 1)]
    [(message,)] = found["partial"][1]
    assert message.startswith("could not read state.md at commit "), message
    assert message.endswith("a step along history cannot be ruled out"), message


def test_a_shallow_clone_says_so_and_reads_its_history_once_deepened(tmp_path: Path) -> None:
    upstream = _upstream(tmp_path)
    clone = tmp_path / "corpus" / "clone"
    clone.parent.mkdir()
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{upstream}", str(clone))
    out = tmp_path / "out"
    first = crawl([str(clone.parent)], str(out), workers=1, git_history=True)
    assert first.history == 1  # HEAD's commit alone
    assert ("clone/.git", "history-incomplete") in _issues(out)
    git(clone, "fetch", "-q", "--unshallow")
    second = crawl([str(clone.parent)], str(out), workers=1, git_history=True)
    assert second.history == 2, "the deepened history is read, though HEAD did not move"


def test_reading_a_repository_never_runs_a_command_its_config_names(tmp_path: Path) -> None:
    """A repository's config may name a command git runs while it reads: the fsmonitor hook
    (on reading the index) ran at every crawl and detect, writing where it liked."""
    from typer.testing import CliRunner

    from pipeline.cli import app

    repo = _upstream(tmp_path)
    marker = tmp_path / "ran"
    git(repo, "config", "core.fsmonitor", f"touch {marker}; false #")
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.program", f"touch {marker}")
    crawl([str(repo)], str(tmp_path / "out"), workers=1, git_history=True)
    detected = CliRunner().invoke(app, ["detect", str(repo / SESSION)])
    assert detected.exit_code in (0, 1), detected.output
    assert not marker.exists(), "git ran a command the crawled repository's config named"


def test_a_file_committed_as_a_symbolic_link_is_not_read_as_its_text(tmp_path: Path) -> None:
    """Git stores a link's target path as its blob: read as forks.md, it was a forks.md with no
    fork, and BS-FORK-01 passed. It is unread, as the working tree's link out of the root is."""
    repo = _upstream(tmp_path)
    forks = repo / SESSION / "forks.md"
    outside = tmp_path / "elsewhere.md"
    forks.rename(outside)
    forks.symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "forks.md is a link now")
    out = tmp_path / "out"
    crawl([str(repo)], str(out), workers=1, git_history=True)
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    rows = con.execute(
        'SELECT o."commit" IS NULL, p.message FROM observations o JOIN parse_issues p '
        "USING (snapshot_id) WHERE p.file = 'forks.md' ORDER BY 1"
    ).fetchall()
    assert rows == [
        (False, "a symbolic link in the commit; not followed"),
        (True, "symbolic link leads out of the root; not followed"),
    ]


def test_a_history_git_cannot_walk_fails_the_series_rules(tmp_path: Path) -> None:
    """A treeless clone (`--filter=tree:0`) has no trees for `git log` to name paths from,
    and git may not fetch them: the history was dropped without a word, and the step back it
    holds passed BS-STATE-01. Now it is a history-incomplete issue, and the rules that compare
    the history fail on the working tree; HEAD is not remembered, so the next night tries again."""
    from pipeline.parse.session import SERIES_RULES
    from pipeline.rules import load_rules

    assert set(SERIES_RULES) == {r.rule_id for r in load_rules() if r.series}
    upstream = _upstream(tmp_path)
    clone = tmp_path / "corpus" / "clone"
    clone.parent.mkdir()
    git(tmp_path, "clone", "-q", "--filter=tree:0", f"file://{upstream}", str(clone))
    out = tmp_path / "out"
    summary = crawl([str(clone.parent)], str(out), workers=1, git_history=True)
    assert summary.history == 0
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    rows = con.execute(
        "SELECT rule_id, message FROM parse_issues WHERE code = 'history-incomplete' "
        "ORDER BY 1 NULLS FIRST"
    ).fetchall()
    assert [r for r, _ in rows] == [None, *sorted(SERIES_RULES)]
    assert all("git could not walk the history (fatal: " in m for _, m in rows)
    again = crawl([str(clone.parent)], str(out), workers=1, git_history=True)
    # Walked again and said again (the snapshot's own issues are stored with it, once).
    assert again.parse_issues == 1


def test_a_commit_git_cannot_list_fails_the_series_rules(tmp_path: Path) -> None:
    """open, stopping, open again, in a repository whose tree object outside docs/ is lost
    (a damaged repository): `git log -- docs` walks it, but `git ls-tree` cannot list a
    commit. Each commit read as no files at all, a deletion, so no commit was stored, no
    issue said so, and BS-STATE-01 passed (found by a hunt; a FIFO among the objects did the
    same after ls-tree's timeout). Now the history is incomplete, and the series rules fail."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "corpus" / "r")
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print('hi')\n")
    git(repo, "init", "-q")
    state = repo / SESSION / "state.md"
    opened = state.read_text()
    for n, text in enumerate((opened, opened.replace("Status: open", "Status: stopping"), opened)):
        state.write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"c{n}")
    tree = git(repo, "rev-parse", "HEAD:src").strip()
    (repo / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    out = tmp_path / "out"
    summary = crawl([str(tmp_path / "corpus")], str(out), workers=1, git_history=True)
    assert summary.history == 0
    check(str(out))
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    rows = con.execute(
        "SELECT rule_id, message FROM parse_issues WHERE code = 'history-incomplete' "
        "ORDER BY 1 NULLS FIRST"
    ).fetchall()
    assert [r for r, _ in rows] == [None, *sorted(SERIES_RULES)]
    assert all("git could not list commit " in m for _, m in rows), rows
    assert con.execute(
        "SELECT failed FROM rule_counts WHERE rule_id = 'BS-STATE-01'"
    ).fetchall() == [(1,)]


@pytest.mark.parametrize("raw_time", ["-86400", "300000000000"])
def test_a_commit_with_a_date_out_of_range_is_said_and_the_rest_is_crawled(
    tmp_path: Path, raw_time: str
) -> None:
    """A commit dated before 1970 (git prints no time for it) or past year 9999 crashed the
    whole crawl with an internal error: no repository was read. Now that repository's history
    is history-incomplete, its series rules fail, and every other repository is crawled."""
    healthy = _upstream(tmp_path)
    odd = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "corpus" / "odd")
    copy_tree(healthy, tmp_path / "corpus" / "healthy")
    git(odd, "init", "-q")
    git(odd, "add", "-A")
    tree = git(odd, "write-tree").strip()
    who = f"t <t@t> {raw_time} +0000"
    body = f"tree {tree}\nauthor {who}\ncommitter {who}\n\nimported\n"
    (tmp_path / "commit.txt").write_text(body)
    sha = git(odd, "hash-object", "-t", "commit", "-w", "--literally", str(tmp_path / "commit.txt"))
    git(odd, "update-ref", "HEAD", sha.strip())
    out = tmp_path / "out"
    summary = crawl([str(tmp_path / "corpus")], str(out), workers=1, git_history=True)
    assert summary.sessions == 2 and summary.history == 3  # the healthy clone's three commits
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    rows = con.execute(
        "SELECT file, rule_id FROM parse_issues WHERE code = 'history-incomplete' "
        "ORDER BY 2 NULLS FIRST"
    ).fetchall()
    assert rows == [("odd/.git", None), *((".git", r) for r in SERIES_RULES)]


def _empty_branch_ref(repo: Path, tmp_path: Path) -> Path:
    (repo / ".git" / "refs" / "heads" / "main").write_text("")  # what a crash can leave
    return repo


def _worktree_of_a_moved_repository(repo: Path, tmp_path: Path) -> Path:
    worktree = tmp_path / "corpus" / "wt"
    git(repo, "worktree", "add", "-q", str(worktree), "-b", "side")
    shutil.move(str(repo), str(tmp_path / "moved"))  # its .git file names a gitdir now gone
    return worktree


@pytest.mark.parametrize("damage", [_empty_branch_ref, _worktree_of_a_moved_repository])
def test_a_head_git_cannot_resolve_is_no_unborn_branch(
    tmp_path: Path, damage: Callable[[Path, Path], Path]
) -> None:
    """A HEAD git cannot resolve (an empty branch ref, a worktree whose repository was moved)
    was taken for "no commit yet", found by a hunt: the history was not read, no word was
    said, and the series rules passed (and a session whose files had not changed since a
    clean night kept that night's clean reading). Now it is history-incomplete and they
    fail, while an unborn branch beside it stays clean; detect and crawl agree on BS-OPS-02."""
    from pipeline.check import check
    from pipeline.detect import detect

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "corpus" / "r")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    unborn = copy_tree(repo, tmp_path / "corpus" / "unborn")
    shutil.rmtree(unborn / ".git")
    git(unborn, "init", "-q")
    out = tmp_path / "out"
    crawl([str(tmp_path / "corpus")], str(out), workers=1, git_history=True, point="n1")
    damaged = damage(repo, tmp_path)  # after a clean night: unchanged files are no excuse
    crawl([str(tmp_path / "corpus")], str(out), workers=1, git_history=True, point="n2")
    check(str(out))
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    rows = con.execute(
        "SELECT file, rule_id, message FROM parse_issues WHERE code = 'history-incomplete' "
        "ORDER BY 2 NULLS FIRST"
    ).fetchall()
    name = damaged.name
    assert [(f, r) for f, r, _ in rows] == [(f"{name}/.git", None)] + [
        (".git", r) for r in sorted(SERIES_RULES)
    ]
    assert all("git could not walk the history (fatal: " in m for _, _, m in rows)
    failing = con.execute(
        "SELECT repo_path, rule_id FROM statuses WHERE point = 'n2' AND status = 'fail' "
        "AND list_contains(?, rule_id) ORDER BY ALL",
        [list(SERIES_RULES)],
    ).fetchall()
    assert failing == [(name, r) for r in sorted(SERIES_RULES)]
    ops = con.execute(
        "SELECT status FROM statuses WHERE point = 'n2' AND rule_id = 'BS-OPS-02' "
        "AND repo_path = ?",
        [name],
    ).fetchone()
    found = detect(str(damaged / SESSION), "session")
    assert [o.status for o in found.outcomes if o.rule == "BS-OPS-02"] == [ops[0]]
