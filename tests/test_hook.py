"""The pre-commit hook (.pre-commit-hooks.yaml → `census hook`), run by the real pre-commit
against git repositories made in the test.

The hook repository is a git repository holding this project's .pre-commit-hooks.yaml, and the
test uses its `census-detect-system` hook, which calls the census installed beside pytest: it
needs no network. (`census-detect`, language python, has pre-commit pip-install census from
the hook repository; the two hooks differ only in that line.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.hook import session_folders
from tests.conftest import FIXTURES, GIT_ENV, ROOT, copy_tree, git

runner = CliRunner()
SESSION = "docs/research/demo-brainstorm"
CLOSES = "- Closes when: a yes/no per alert class"


def test_files_map_to_their_session_folders_once() -> None:
    files = [
        f"{SESSION}/forks.md",
        f"{SESSION}/ops/capture.md",
        "docs/history/brainstorms/old/thesis.md",
        "docs/history/brainstorms/README.md",  # a file, not a session folder
        "docs/architecture/overview.md",
        "sub/repo/docs/research/x-brainstorm/state.md",
        "docs/research/-brainstorm/state.md",  # a session whose topic is empty
    ]
    assert session_folders(files) == [
        SESSION,
        "docs/history/brainstorms/old",
        "sub/repo/docs/research/x-brainstorm",
        "docs/research/-brainstorm",
    ]


def test_the_hooks_match_the_files_the_hook_maps() -> None:
    import re

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert {h["id"] for h in hooks} == {"census-detect", "census-detect-system"}
    for hook in hooks:
        assert hook["entry"] == "census hook" and hook["require_serial"] is True
        pattern = re.compile(hook["files"])
        assert pattern.search(f"{SESSION}/forks.md")
        assert pattern.search("nested/docs/history/brainstorms/old/ledger.md")
        assert pattern.search("docs/research/-brainstorm/forks.md")  # a topic that is empty
        assert not pattern.search("docs/architecture/overview.md")
        assert not pattern.search("docs/research/notes.md")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with one open session, committed clean."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "project")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a clean session")
    return repo


@pytest.fixture
def hook_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "hooks"
    repo.mkdir()
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", repo / ".pre-commit-hooks.yaml")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hooks")
    return repo


def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command in the repository with the census and pre-commit beside pytest on PATH."""
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        **GIT_ENV,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "PRE_COMMIT_HOME": str(repo.parent / "pre-commit-home"),
        "PRE_COMMIT_COLOR": "never",
    }
    return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def break_fork(repo: Path) -> None:
    forks = repo / SESSION / "forks.md"
    text = forks.read_text()
    assert CLOSES in text
    forks.write_text(text.replace(CLOSES, "- Note: a yes/no per alert class"))


def test_try_repo_fails_a_broken_session_and_passes_a_clean_one(
    project: Path, hook_repo: Path
) -> None:
    break_fork(project)
    git(project, "add", "-A")
    hook = [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo)]
    failed = run(project, *hook, "census-detect-system")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"census detect {SESSION} --gate session: failing" in failed.stdout
    assert "BS-FORK-01 fail forks.md:3 F1 has no 'Closes when:'" in failed.stdout
    git(project, "checkout", "HEAD", "--", SESSION)
    clean = run(project, *hook, "census-detect-system", "--files", f"{SESSION}/forks.md")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout


def test_a_failing_session_blocks_the_commit(project: Path, hook_repo: Path) -> None:
    rev = git(hook_repo, "rev-parse", "HEAD").strip()
    config = {
        "repos": [
            {
                "repo": str(hook_repo),
                "rev": rev,
                "hooks": [{"id": "census-detect-system", "args": ["--gate", "session"]}],
            }
        ]
    }
    (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git(project, "add", ".pre-commit-config.yaml")
    git(project, "commit", "-q", "-m", "use the census hook")
    installed = run(project, sys.executable, "-m", "pre_commit", "install")
    assert installed.returncode == 0, installed.stderr
    head = git(project, "rev-parse", "HEAD")

    break_fork(project)
    git(project, "add", "-A")
    blocked = run(project, "git", "commit", "-m", "drop a closing condition")
    assert blocked.returncode == 1
    # git shows a hook's output on stderr.
    assert "BS-FORK-01 fail forks.md:3 F1 has no 'Closes when:'" in blocked.stderr
    assert git(project, "rev-parse", "HEAD") == head, "nothing was committed"

    forks = project / SESSION / "forks.md"
    forks.write_text(forks.read_text().replace("- Note: a yes/no", "- Closes when: a yes or no"))
    git(project, "add", "-A")
    passed = run(project, "git", "commit", "-m", "word the closing condition")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert git(project, "rev-parse", "HEAD") != head


def test_hook_command_checks_each_folder_once_and_exits_with_the_worst(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    break_fork(project)
    monkeypatch.chdir(project)
    files = [f"{SESSION}/forks.md", f"{SESSION}/state.md", "README.md"]
    failing = runner.invoke(app, ["hook", *files])
    assert failing.exit_code == 1
    assert failing.stdout.count("census detect ") == 1
    assert "  BS-FORK-01 fail forks.md:3 F1 has no 'Closes when:'" in failing.stdout
    git(project, "checkout", "HEAD", "--", SESSION)
    clean = runner.invoke(app, ["hook", *files, "--gate", "session"])
    assert clean.exit_code == 0
    assert clean.stdout == f"census detect {SESSION} --gate session: clean\n"
    assert runner.invoke(app, ["hook", "README.md"]).exit_code == 0, "no session: nothing to do"
    missing = runner.invoke(app, ["hook", "docs/research/gone-brainstorm/state.md"])
    assert missing.exit_code == 2 and "no such directory" in missing.stderr


def _docs_clone_tracking_ops(checkout: Path) -> None:
    """A clone nested at the checkout's docs/ whose session tracks ops/capture.md."""
    copy_tree(FIXTURES / "cases" / "base" / "open" / "repo" / "docs", checkout / "docs")
    git(checkout / "docs", "init", "-q")
    git(checkout / "docs", "add", "-A")
    git(checkout / "docs", "add", "-f", "research/demo-brainstorm/ops/capture.md")
    git(checkout / "docs", "commit", "-q", "-m", "ops tracked by mistake")


def test_the_hook_asks_a_nested_clone_not_the_repository_git_gives_it(tmp_path: Path) -> None:
    """git gives a pre-commit hook the committing repository's GIT_INDEX_FILE (its
    index.lock in `git commit -a`) and, in a linked worktree, its GIT_DIR: census ran git with
    them, so a session in a clone nested at docs/ was read through the outer repository's
    index, its tracked ops/ file unseen, and the commit went through (found by a hunt)."""
    outer = tmp_path / "outer"
    outer.mkdir()
    (outer / "a").write_text("a\n")
    git(outer, "init", "-q")
    git(outer, "add", "a")
    git(outer, "commit", "-q", "-m", "a")
    git(outer, "worktree", "add", "-q", str(tmp_path / "linked"))
    hook = outer / ".git" / "hooks" / "pre-commit"
    census = Path(sys.executable).parent / "census"
    hook.write_text(f"#!/bin/sh\nexec {census} hook {SESSION}/forks.md\n")
    hook.chmod(0o755)
    for checkout, commit in ((outer, ["commit", "-qam", "b"]), (tmp_path / "linked", None)):
        _docs_clone_tracking_ops(checkout)
        (checkout / "a").write_text("b\n")
        if commit is None:
            git(checkout, "add", "a")
        done = run(checkout, "git", *(commit or ["commit", "-qm", "b"]))
        assert done.returncode == 1, done.stdout + done.stderr
        assert "BS-OPS-02 fail ops/capture.md" in done.stderr
