"""A run is visible whole or not at all: SIGKILL at each point of a crawl leaves OUT as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.crawl import crawl
from pipeline.store import Out, OutError
from tests.conftest import ROOT, base_corpus
from tests.test_crawl import table_contents

KILL_POINTS = ["writing", "staged", "partly-published", "before-commit"]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return base_corpus(tmp_path / "corpus", 6)


def crawl_in_child(corpus: Path, out: Path, kill_at: str | None) -> int:
    env = {**os.environ, "CENSUS_KILL_AT": kill_at or ""}
    code = f"from pipeline.crawl import crawl; crawl([{str(corpus)!r}], {str(out)!r}, workers=1)"
    # JOB_SESSIONS is lowered so the crawl has several jobs, and "writing" falls between them.
    code = "import pipeline.crawl as c; c.JOB_SESSIONS = 1; " + code
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=False).returncode


def change(corpus: Path) -> None:
    forks = next(corpus.glob("repo-00/docs/research/*/forks.md"))
    forks.write_text(
        forks.read_text() + "\n## F9 — Late [open]\n- Raised by: user\n- Closes when: x\n"
    )


@pytest.mark.parametrize("point", KILL_POINTS)
def test_kill_leaves_out_as_before_and_the_next_run_succeeds(
    point: str, corpus: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1)
    before = table_contents(out)
    change(corpus)
    assert crawl_in_child(corpus, out, point) == -signal.SIGKILL
    assert table_contents(out) == before, f"a run killed at {point!r} became visible"
    after = crawl([str(corpus)], str(out), workers=1)
    assert after.parsed == 1, "the next run re-reads only what changed"
    contents = table_contents(out)
    assert len(contents["observations"]) == 2 * len(before["observations"])
    assert not (out / "staging").exists() or not any((out / "staging").iterdir())


def test_kill_after_commit_shows_the_whole_run(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1)
    before = table_contents(out)
    change(corpus)
    assert crawl_in_child(corpus, out, "committed") == -signal.SIGKILL
    after = table_contents(out)
    assert len(after["observations"]) == 2 * len(before["observations"])
    assert any(row[3] == "F9" for row in after["forks"]), "the killed run's new fork is stored"
    assert crawl([str(corpus)], str(out), workers=1).parsed == 0


def test_unchanged_out_after_a_refused_second_writer(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1)
    before = table_contents(out)
    with Out(out).lock(), pytest.raises(OutError):
        crawl([str(corpus)], str(out), workers=1)
    assert table_contents(out) == before


BEFORE = "census: interrupted; OUT is as it was before this command (its writes commit whole"
AFTER = "census: interrupted after this command's writes were committed: OUT holds them"


@pytest.mark.parametrize("command", ["crawl", "check"])
@pytest.mark.parametrize(("point", "said"), [("staged", BEFORE), ("committed", AFTER)])
def test_ctrl_c_says_what_it_left(
    command: str, point: str, said: str, corpus: Path, tmp_path: Path
) -> None:
    """A real SIGINT (what Ctrl-C sends) where the command's files are staged leaves OUT as it
    was, and says so. Just after the commit it said the same, while OUT held the new run or
    check: it says OUT holds them."""
    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1)
    if command == "crawl":
        change(corpus)
        argv = ["crawl", str(corpus), "--out", str(out), "--workers", "1"]
    else:
        argv = ["check", "--out", str(out)]
    before, manifest = table_contents(out), (out / "manifest.json").read_text()
    env = {**os.environ, "CENSUS_KILL_AT": point, "CENSUS_KILL_WITH": "SIGINT"}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 130
    assert done.stderr.strip().splitlines()[-1].startswith(said), done.stderr
    if point == "staged":
        assert table_contents(out) == before
    else:
        assert (out / "manifest.json").read_text() != manifest  # the new files are committed


def _processes_with(mark: str) -> list[int]:
    """Live processes whose environment carries `mark` (a crawl's workers inherit it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"CENSUS_TEST_MARK={mark}".encode() in environ.split(b"\0") and state != "Z":
            found.append(int(pid))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_end_with_a_crawl_killed_outright(corpus: Path, tmp_path: Path) -> None:
    """A scheduler's `timeout -s KILL` kills the crawl alone: its worker processes must not
    run on without it (they did, for minutes, holding their pipes)."""
    mark = f"{os.getpid()}-{tmp_path.name}"
    env = {**os.environ, "CENSUS_KILL_AT": "writing", "CENSUS_TEST_MARK": mark}
    # Every job goes to the two workers (none inline), and "writing" falls between jobs.
    code = (
        "import pipeline.crawl as c; c.JOB_SESSIONS = 1; c.INLINE_SESSIONS = 1; "
        f"c.crawl([{str(corpus)!r}], {str(tmp_path / 'out')!r}, workers=2)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=False)
    assert done.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 20
    while _processes_with(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_with(mark) == []


def test_a_check_failing_beside_its_lifetimes_leaves_out_as_before(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check estimates lifetimes on a thread beside the rules: when the rules fail, the check
    fails with their error, stages nothing into OUT, and the next check decides the point."""
    import pipeline.check as checking

    out = tmp_path / "out"
    crawl([str(corpus)], str(out), workers=1)
    before, manifest = table_contents(out), (out / "manifest.json").read_text()

    def failing(*args: object, **kwargs: object) -> str:
        raise RuntimeError("the rules failed")

    with monkeypatch.context() as patched:
        patched.setattr(checking, "evaluate", failing)
        with pytest.raises(RuntimeError, match="the rules failed"):
            checking.check(str(out))
    assert (out / "manifest.json").read_text() == manifest
    assert table_contents(out) == before
    summary = checking.check(str(out))
    assert summary.points and summary.snapshots == 6


def _interrupt_handler() -> str:
    import signal

    return str(signal.getsignal(signal.SIGINT))


def test_the_crawls_workers_leave_ctrl_c_to_the_crawl() -> None:
    """A terminal's Ctrl-C reaches every process of the group: workers interrupted mid-reply
    printed tracebacks, and once the pool hung on half a reply, holding OUT's lock (found by a
    hunt). A worker ignores it; the crawl drops the queued jobs and stops."""
    import os
    import signal
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from pipeline.lifeline import die_with_parent

    with ProcessPoolExecutor(1, get_context("spawn"), die_with_parent, (os.getpid(),)) as pool:
        assert pool.submit(_interrupt_handler).result() == str(signal.SIG_IGN)


TRAP_TYPER = """
import importlib, os, signal, sys, tomllib
class Trap:  # Ctrl-C while the CLI's modules load: the moment typer is imported
    def find_spec(self, name, path=None, target=None):
        if name == "typer":
            os.kill(os.getpid(), signal.SIGINT)
        return None
script = tomllib.load(open("pyproject.toml", "rb"))["project"]["scripts"]["census"]
module, function = script.split(":")
sys.meta_path.insert(0, Trap())
sys.argv = ["census", *sys.argv[1:]]
getattr(importlib.import_module(module), function)()
"""


@pytest.mark.parametrize("command", ["detect", "check"])
def test_ctrl_c_while_the_cli_loads_is_one_line(command: str, tmp_path: Path) -> None:
    """A Ctrl-C in the first tenth of a second or so, while the console script imported typer
    and the census modules, printed a KeyboardInterrupt traceback: for `census detect` that was
    most of its life (found by a hunt)."""
    argv = ["detect", str(tmp_path)] if command == "detect" else ["check", "--out", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-c", TRAP_TYPER, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr == "census: interrupted before it started; nothing was read or written\n"


def test_ctrl_c_of_detect_names_no_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """detect and hook write no OUT, yet their Ctrl-C line said "OUT is as it was before this
    command" (found by a hunt)."""
    from pipeline import cli

    monkeypatch.setattr(sys, "argv", ["census", "detect", str(tmp_path)])
    assert "OUT" not in cli._interrupted()
    monkeypatch.setattr(sys, "argv", ["census", "check", "--out", str(tmp_path)])
    assert "OUT" in cli._interrupted()
