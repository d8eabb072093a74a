"""Beyond one process: shards that fill one OUT together, and a Dask cluster for the work."""

from __future__ import annotations

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
