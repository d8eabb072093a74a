"""Shared helpers: real files, real git repositories, real DuckDB — no mocks."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Census Test",
    "GIT_AUTHOR_EMAIL": "census@test.invalid",
    "GIT_COMMITTER_NAME": "Census Test",
    "GIT_COMMITTER_EMAIL": "census@test.invalid",
    "GIT_AUTHOR_DATE": "2026-07-01T12:00:00Z",
    "GIT_COMMITTER_DATE": "2026-07-01T12:00:00Z",
}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_git_repo(repo: Path, force_add: list[str] | None = None) -> None:
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    for path in force_add or []:
        git(repo, "add", "-f", path)
    git(repo, "commit", "-q", "-m", "fixture")


def age(root: Path, seconds: int = 3600) -> None:
    """Every file and folder (git's included) last changed an hour ago, as on a real night."""
    then = time.time() - seconds
    for top, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(os.path.join(top, name), (then, then), follow_symlinks=False)
    os.utime(root, (then, then))


def copy_tree(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    return target


def base_corpus(root: Path, repositories: int) -> Path:
    """Copies of the four healthy bases, a topic per repository so every snapshot differs."""
    for i in range(repositories):
        stage = ("open", "converging", "applied", "harvested")[i % 4]
        repo = copy_tree(FIXTURES / "cases" / "base" / stage / "repo", root / f"repo-{i:02d}")
        for folder in [*repo.glob("docs/research/*"), *repo.glob("docs/history/brainstorms/*")]:
            folder.rename(folder.with_name(folder.name.replace("demo", f"demo{i}")))
    return root


def checked_rows(root: Path, out: Path, query: str) -> list[tuple[Any, ...]]:
    """Crawl `root` into `out`, check it, and answer `query` over OUT's tables and views."""
    from pipeline.check import check
    from pipeline.crawl import crawl
    from pipeline.engine import connect
    from pipeline.store import Out

    crawl([str(root)], str(out), workers=1)
    check(str(out))
    rows: list[tuple[Any, ...]] = connect(Out(out)).execute(query).fetchall()
    return rows


def show_lifetimes_unfrozen(con: Any) -> None:
    """Show the connection its OUT as a census that froze no lifetimes left it: stats, the
    report and compare then compute them from the history, live."""
    from pipeline.engine import out_view

    con.execute(
        "CREATE OR REPLACE TEMP TABLE checks AS "
        f"SELECT * REPLACE (false AS lifetimes_frozen) FROM {out_view(con, 'checks')}"
    )


def generate_corpus(target: Path, sessions: int, seed: int, rate: float, *extra: str) -> Path:
    """A synthetic corpus with its truth.jsonl, from the generator (in this process)."""
    from fixtures.generate import main

    args = [str(target), "--sessions", str(sessions), "--seed", str(seed)]
    assert main([*args, "--defect-rate", str(rate), *extra]) == 0
    return target


@pytest.fixture
def example_corpus() -> Path:
    return FIXTURES / "example"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs; skipped where this process may not mount one."""
    disk = tmp_path / "disk"
    disk.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)],
            capture_output=True,
            text=True,
        )
    except FileNotFoundError:
        pytest.skip("no mount command: the full-disk tests need a small tmpfs")
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({done.stderr.strip()}): needs root or CAP_SYS_ADMIN"
        )
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def fill(disk: Path, leave: int = 0) -> Path:
    """Take the disk's free space, all but `leave` bytes."""
    filler = disk / "filler"
    stat = os.statvfs(disk)
    free = stat.f_bavail * stat.f_frsize
    with open(filler, "ab") as handle:
        try:
            handle.write(b"\0" * max(free - leave, 0))
            handle.flush()
        except OSError:  # the last page: the disk is full, as wanted
            pass
    return filler
