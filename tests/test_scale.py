"""Beyond one process: shards that fill one OUT together, and a Dask cluster for the work."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.crawl import crawl
from pipeline.store import Out, OutError
from tests.conftest import base_corpus
from tests.test_crawl import table_contents


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return base_corpus(tmp_path_factory.mktemp("scale") / "corpus", 24)


def test_shards_together_equal_one_unsharded_crawl(corpus: Path, tmp_path: Path) -> None:
    whole = crawl([str(corpus)], str(tmp_path / "whole"), workers=1)
    sharded = tmp_path / "sharded"
    counts = [
        crawl([str(corpus)], str(sharded), workers=1, shard=(k, 3), point="night").sessions
        for k in (1, 2, 3)
    ]
    assert sum(counts) == whole.sessions == 24
    assert all(counts), "each shard got some sessions"
    got, want = table_contents(sharded), table_contents(tmp_path / "whole")
    # Observations differ only in which run saw them; compare everything else as sets.
    assert got == want


def test_shard_option_is_validated(corpus: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["crawl", str(corpus), "--out", str(tmp_path / "o"), "--shard", "4/3"]
    )
    assert result.exit_code == 2 and "K/N" in result.output
    result = CliRunner().invoke(
        app, ["crawl", str(corpus), "--out", str(tmp_path / "o"), "--shard", "1/3"]
    )
    assert result.exit_code == 2 and "--point" in result.output


def test_a_second_writer_refuses_while_a_run_holds_out(corpus: Path, tmp_path: Path) -> None:
    out = Out(tmp_path / "out")
    crawl([str(corpus)], str(out.root), workers=1)
    with out.lock(), pytest.raises(OutError, match="another census process"):
        crawl([str(corpus)], str(out.root), workers=1)
    with out.lock(shared=True), pytest.raises(OutError, match="another census process"):
        crawl([str(corpus)], str(out.root), workers=1)


@pytest.mark.parametrize(
    "address", ["scheduler-host", "tcp://127.0.0.1:1", "tls://127.0.0.1:1", "ucx://127.0.0.1:1"]
)
def test_a_scheduler_not_reached_is_one_clear_line(
    corpus: Path, tmp_path: Path, address: str
) -> None:
    """A --scheduler with no port, or where no scheduler listens, ended in `census: internal
    error: ValueError …` / `OSError: Timed out trying to connect …`, the line for a bug
    (found by a hunt)."""
    pytest.importorskip("distributed")
    out = tmp_path / "o"
    done = census_process("crawl", str(corpus), "--out", str(out), "--scheduler", address)
    assert done.returncode == 2 and "no Dask scheduler reached" in done.stderr, done.stderr
    assert "internal error" not in done.stderr and not (out / "manifest.json").exists()


@pytest.mark.parametrize("address", ["", " "])
def test_an_empty_scheduler_address_is_a_usage_error(
    corpus: Path, tmp_path: Path, address: str
) -> None:
    """`--scheduler ''` (an unset variable) crawled on local processes, exit 0: the cluster
    asked for was silently not used (found by a hunt)."""
    out = tmp_path / "o"
    result = CliRunner().invoke(
        app, ["crawl", str(corpus), "--out", str(out), "--scheduler", address]
    )
    assert result.exit_code == 2 and "names no Dask scheduler" in result.output, result.output
    assert not out.exists()


def test_a_scheduler_with_no_worker_is_one_clear_line(corpus: Path, tmp_path: Path) -> None:
    """A scheduler that answers but has no worker ended, once Dask gave up, in `census:
    internal error: TimeoutError: No valid workers found`, the line for a bug; so did a tls://
    or ucx:// address (TypeError) (found by a hunt)."""
    pytest.importorskip("distributed")
    out = tmp_path / "o"
    with dask_cluster(tmp_path, workers=0) as address:
        done = census_process("crawl", str(corpus), "--out", str(out), "--scheduler", address)
    assert done.returncode == 2 and "no worker" in done.stderr, done.stderr
    assert "internal error" not in done.stderr and not (out / "manifest.json").exists()


def test_a_silent_scheduler_address_fails_fast_with_one_clear_line(
    corpus: Path, tmp_path: Path
) -> None:
    """A --scheduler address where something takes the connection and never answers (no
    Dask scheduler, or a hung one): Dask's connect timeout does not bound that handshake,
    so the crawl waited forever (found by a hunt). It now gives up after twice the connect
    timeout and a few seconds, with one line, exit 2. The crawl runs in a process of its
    own, bounded, so that the test fails rather than hangs without the fix."""
    pytest.importorskip("distributed")
    out = tmp_path / "o"
    with socket.create_server(("127.0.0.1", 0)) as silent:
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        try:
            done = census_process(
                "crawl", str(corpus), "--out", str(out), "--scheduler", address, timeout=90
            )
        except subprocess.TimeoutExpired:
            pytest.fail("the crawl still waited for the silent address after 90 s")
    assert done.returncode == 2, done.stderr
    assert "no Dask scheduler answered" in done.stderr and done.stderr.count("\n") == 1
    assert not (out / "manifest.json").exists()


def test_a_scheduler_lost_mid_crawl_is_one_clear_line(tmp_path: Path) -> None:
    """The scheduler stopped while the crawl's jobs ran on it: Dask logged its tracebacks on
    stderr and the crawl ended in `census: internal error: FuturesCancelledError`, the line for
    a bug (found by a hunt). It is one line, exit 2, and OUT holds nothing of the crawl."""
    pytest.importorskip("distributed")
    from tests.conftest import generate_corpus

    corpus = generate_corpus(tmp_path / "corpus", 300, 7, 0.05)
    out = tmp_path / "o"
    started: list[subprocess.Popen[bytes]] = []
    with dask_cluster(tmp_path, workers=1, started=started) as address:
        env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
        census = Path(sys.executable).with_name("census")
        args = [str(census), "crawl", str(corpus), "--out", str(out), "--scheduler", address]
        crawl_process = subprocess.Popen(
            args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        # The crawl's client has connected: its 300 jobs take the one worker seconds, so half
        # a second on the jobs are running (a kill before them, in scatter, reads the same).
        wait_for_log(tmp_path / "dask-logs" / "scheduler.log", r"(Receive client connection)", 1)
        time.sleep(0.5)
        started[0].kill()
        _, stderr = crawl_process.communicate(timeout=120)
    assert crawl_process.returncode == 2, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    assert stderr.count("\n") == 1 and "the Dask scheduler was lost" in stderr, stderr
    assert not (out / "manifest.json").exists()


def test_dask_cluster_gives_the_same_tables(corpus: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    with dask_cluster(tmp_path, workers=2) as address:
        done = census_process(
            "crawl", str(corpus), "--out", str(tmp_path / "dask"), "--scheduler", address
        )
    assert done.returncode == 0, done.stderr
    local = crawl([str(corpus)], str(tmp_path / "local"), workers=1)
    assert local.sessions == 24 and "24 sessions" in done.stdout, done.stdout
    assert table_contents(tmp_path / "dask") == table_contents(tmp_path / "local")


# Every Dask scheduler, worker and client here runs in a process of its own. In-process, a
# cluster whose IO loop missed distributed's 10 s start on a loaded CI machine failed its test
# and, left unclosed, failed an unrelated later one with a ResourceWarning.
def census_process(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`census ARGS` as a user runs it, with a 1 s Dask connect timeout, bounded."""
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    census = Path(sys.executable).with_name("census")
    return subprocess.run(
        [str(census), *args], env=env, capture_output=True, text=True, timeout=timeout
    )


@contextmanager
def dask_cluster(
    tmp_path: Path, workers: int, started: list[subprocess.Popen[bytes]] | None = None
) -> Iterator[str]:
    """A `dask scheduler` and `workers` single-threaded `dask worker`s; yields the address
    once every worker has registered. `started` receives the processes, the scheduler first."""
    dask = Path(sys.executable).with_name("dask")
    logs = tmp_path / "dask-logs"
    logs.mkdir()
    started = [] if started is None else started

    def start(name: str, *args: str) -> Path:
        log = logs / f"{name}.log"
        with log.open("wb") as sink:
            started.append(subprocess.Popen([str(dask), *args], stderr=sink, stdout=sink))
        return log

    try:
        scheduler = start(
            "scheduler",
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--dashboard-address",
            "127.0.0.1:0",
        )
        found = wait_for_log(scheduler, r"Scheduler at:\s+(tcp://\S+)", 1)
        address = found[0]
        if workers:
            log = start(
                "worker",
                "worker",
                address,
                "--nworkers",
                str(workers),
                "--nthreads",
                "1",
                "--no-dashboard",
            )
            wait_for_log(log, r"Registered to:\s+(tcp://\S+)", workers)
        yield address
    finally:
        for process in reversed(started):
            process.terminate()
        for process in started:
            process.wait(timeout=60)


def wait_for_log(log: Path, pattern: str, count: int) -> list[str]:
    """The first group of `pattern` once it occurs `count` times in `log` (2 minutes at most)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = re.findall(pattern, log.read_text(errors="replace"))
        if len(found) >= count:
            return found
        time.sleep(0.1)
    pytest.fail(f"dask did not get ready in 2 minutes:\n{log.read_text(errors='replace')}")


def test_a_dask_io_loop_that_misses_its_start_is_one_clear_line() -> None:
    """distributed's LoopRunner gives its IO loop thread 10 s to start, then fails an
    `assert loop is not None` (an AssertionError with no message) — a starved machine, not
    a bug of ours — which the crawl re-raised as `internal error: AssertionError` (found by
    a hunt). The client maker here fails as LoopRunner does; the real one cannot be starved
    on demand."""
    from pipeline.crawl import _dask_client
    from pipeline.errors import UsageError

    def loop_missed_its_start(address: str, timeout: float) -> None:
        raise AssertionError

    with pytest.raises(UsageError, match="could not start") as raised:
        _dask_client(loop_missed_its_start, "tcp://127.0.0.1:8786")
    assert "\n" not in str(raised.value)
