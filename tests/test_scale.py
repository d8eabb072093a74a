"""Beyond one process: shards that fill one OUT together, and a Dask cluster for the work."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
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
    dask = pytest.importorskip("dask")
    pytest.importorskip("distributed")
    out = tmp_path / "o"
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        result = CliRunner().invoke(
            app, ["crawl", str(corpus), "--out", str(out), "--scheduler", address]
        )
    assert result.exit_code == 2 and "no Dask scheduler reached" in result.output, result.output
    assert "internal error" not in result.output and not (out / "manifest.json").exists()


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
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    out = tmp_path / "o"
    with (
        dask.config.set({"distributed.comm.timeouts.connect": "2s"}),
        distributed.LocalCluster(n_workers=0, dashboard_address=None) as cluster,
    ):
        result = CliRunner().invoke(
            app, ["crawl", str(corpus), "--out", str(out), "--scheduler", cluster.scheduler_address]
        )
    assert result.exit_code == 2 and "no worker" in result.output, result.output
    assert "internal error" not in result.output and not (out / "manifest.json").exists()


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
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    census = Path(sys.executable).with_name("census")
    with socket.create_server(("127.0.0.1", 0)) as silent:
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        args = [str(census), "crawl", str(corpus), "--out", str(out), "--scheduler", address]
        try:
            done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=90)
        except subprocess.TimeoutExpired:
            pytest.fail("the crawl still waited for the silent address after 90 s")
    assert done.returncode == 2, done.stderr
    assert "no Dask scheduler answered" in done.stderr and done.stderr.count("\n") == 1
    assert not (out / "manifest.json").exists()


def test_dask_cluster_gives_the_same_tables(corpus: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    # Any free port for the dashboard: with the default 8787 taken by another cluster on the
    # machine, distributed warns, and warnings are errors here.
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        on_dask = crawl([str(corpus)], str(tmp_path / "dask"), scheduler=cluster.scheduler_address)
    local = crawl([str(corpus)], str(tmp_path / "local"), workers=1)
    assert on_dask.sessions == local.sessions == 24
    assert table_contents(tmp_path / "dask") == table_contents(tmp_path / "local")
