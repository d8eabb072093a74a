"""A crawl adds to the latest census point or starts a new one (docs/time-model.md). A late
crawl into an earlier night (its second shard, or a plain rerun with its --point) ordered
that night's newer content before the next night's: a session that moved stopping →
harvested read as harvested → stopping, a false BS-STATE-01 frozen at the later night.
Shards of one night share one N: a shard of another N made the night, and every later one,
impossible to check. The runs of one point share their labels: a replay's candidate crawled
into the baseline's point made one point of both arms, compared with itself."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

import pytest
from typer.testing import CliRunner

import pipeline.crawl
import pipeline.store
from pipeline.cli import app
from tests.conftest import FIXTURES, copy_tree, make_git_repo

runner = CliRunner()
STATE = "repo/docs/research/demo-brainstorm/state.md"


class _Behind(datetime):
    """The clock of a host that stepped back an hour (the machine's own cannot be set)."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> _Behind:
        moment = datetime.now(tz) - timedelta(hours=1)
        return cls.fromtimestamp(moment.timestamp(), tz)


class _Ahead(datetime):
    """The clock of a host running an hour ahead."""

    @classmethod
    def now(cls, tz: tzinfo | None = None) -> _Ahead:
        moment = datetime.now(tz) + timedelta(hours=1)
        return cls.fromtimestamp(moment.timestamp(), tz)


def _crawl(root: Path, out: Path, point: str, *more: str) -> tuple[int, str]:
    result = runner.invoke(app, ["crawl", str(root), "--out", str(out), "--point", point, *more])
    return result.exit_code, result.stderr


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    return root


def test_a_late_crawl_into_an_earlier_point_is_refused(tmp_path: Path) -> None:
    root, out = _corpus(tmp_path), tmp_path / "out"
    assert _crawl(root, out, "A", "--shard", "1/2")[0] == 0
    state = root / STATE
    state.write_text(state.read_text().replace("Status: open", "Status: stopping"))
    assert _crawl(root, out, "B")[0] == 0
    manifest = (out / "manifest.json").read_bytes()
    for late in (["--shard", "2/2"], []):
        code, stderr = _crawl(root, out, "A", *late)
        assert code == 2
        assert stderr == (
            "census: census point 'A' is no longer the latest ('B' was crawled after it); a "
            "crawl adds to the latest point or starts a new one: crawl into a new --point\n"
        )
        assert (out / "manifest.json").read_bytes() == manifest, "OUT is as it was"
    # The latest point takes more runs, and a new point starts after it.
    assert _crawl(root, out, "B")[0] == 0
    assert _crawl(root, out, "C")[0] == 0
    # A can no longer be completed: check says so, and how to go on without it.
    stuck = runner.invoke(app, ["check", "--out", str(out)])
    assert stuck.exit_code == 2
    assert stuck.stderr == (
        "census: census point 'A' holds shards 1/2 only, and 'B' was crawled after it, so no "
        "shard can join it now; drop it with census prune --point A, then check\n"
    )
    pruned = runner.invoke(app, ["prune", "--out", str(out), "--point", "A"])
    assert pruned.exit_code == 0, pruned.output
    checked = runner.invoke(app, ["check", "--out", str(out)])
    assert checked.exit_code == 0, checked.output
    assert "checked 2 census point(s) (B, C)" in checked.stdout


def _checked_then_stepped_back(tmp_path: Path) -> tuple[Path, Path]:
    """n1 crawled and checked with Status stopping, then the working tree set back to open,
    not yet crawled: (root, OUT)."""
    root, out = _corpus(tmp_path), tmp_path / "out"
    state = root / STATE
    state.write_text(state.read_text().replace("Status: open", "Status: stopping"))
    assert _crawl(root, out, "n1")[0] == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    state.write_text(state.read_text().replace("Status: stopping", "Status: open"))
    return root, out


def test_a_prune_never_drops_what_an_unchecked_point_compares_with(tmp_path: Path) -> None:
    """n2 (Status back to open) is crawled, not checked; dropping n1 first would lose its
    backward step. The prune is refused until n2 is checked."""
    root, out = _checked_then_stepped_back(tmp_path)
    assert _crawl(root, out, "n2")[0] == 0
    refused = runner.invoke(app, ["prune", "--out", str(out), "--keep-last", "1"])
    assert refused.exit_code == 2
    assert refused.stderr == (
        "census: census point 'n2' is not checked yet and compares with 'n1', which this prune "
        "drops; run census check first\n"
    )
    checked = runner.invoke(app, ["check", "--out", str(out)])
    assert checked.exit_code == 0 and "1 finding along history" in checked.stdout, checked.stdout
    assert runner.invoke(app, ["prune", "--out", str(out), "--keep-last", "1"]).exit_code == 0


def test_a_shard_of_another_n_is_refused(tmp_path: Path) -> None:
    root, out = _corpus(tmp_path), tmp_path / "out"
    assert _crawl(root, out, "A", "--shard", "1/2")[0] == 0
    assert _crawl(root, out, "A", "--shard", "2/2")[0] == 0
    code, stderr = _crawl(root, out, "A", "--shard", "1/3")
    assert code == 2
    assert stderr == (
        "census: census point 'A' holds shards 1/2, 2/2; --shard 1/3 cannot join them (the "
        "shards of one night share one N)\n"
    )
    assert _crawl(root, out, "A", "--shard", "2/2")[0] == 0, "a shard crawled again may join"
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0


def test_shards_given_other_roots_are_not_checked(tmp_path: Path) -> None:
    """Shard 2/2 crawled root A only where 1/2 crawled A and B: B's share of shard 2 was never
    read, and check froze the night without it (found by a hunt). Check refuses the night
    until the shard is crawled again with the night's roots."""
    first, second = _corpus(tmp_path / "a"), _corpus(tmp_path / "b")
    out = tmp_path / "out"
    both = ["crawl", str(first), str(second), "--out", str(out), "--point", "n"]
    assert runner.invoke(app, [*both, "--shard", "1/2"]).exit_code == 0
    assert _crawl(first, out, "n", "--shard", "2/2")[0] == 0
    refused = runner.invoke(app, ["check", "--out", str(out)])
    assert refused.exit_code == 2
    assert refused.stderr == (
        "census: the shards of census point 'n' crawled other roots (1/2 crawled 2 roots, 2/2 "
        "crawled 1 root): each shard takes its share of the roots it is given, so every shard "
        "of a night is given the same roots; crawl the shard again with them (--point n), "
        "then check\n"
    )
    assert runner.invoke(app, [*both, "--shard", "2/2"]).exit_code == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0


@pytest.mark.parametrize("shard", [("--shard", "1/2"), ()])
def test_a_label_named_shard_beside_shard_is_refused(
    tmp_path: Path, shard: tuple[str, ...]
) -> None:
    """`--label shard=1-of-1` with `--shard 1/2` kept the user's label over the crawl's own,
    and check froze the night whole with one shard of two in it (found by a hunt). Without
    --shard, the label made a night of shards that no crawl could finish, and every check
    after it exited 2 (found by a hunt)."""
    root, out = _corpus(tmp_path), tmp_path / "out"
    code, stderr = _crawl(root, out, "A", *shard, "--label", "shard=1-of-1")
    assert code == 2
    assert stderr == (
        "census: --label shard=1-of-1 names the label --shard gives the run (shard=K-of-N); "
        "give your label another name\n"
    )
    assert not (out / "manifest.json").exists(), "nothing was written"


def test_a_crawl_with_other_labels_than_its_point_is_refused(tmp_path: Path) -> None:
    root, out = _corpus(tmp_path), tmp_path / "out"
    assert _crawl(root, out, "replay", "--label", "arm=baseline", "--shard", "1/2")[0] == 0
    code, stderr = _crawl(root, out, "replay", "--label", "arm=candidate")
    assert code == 2
    assert stderr == (
        "census: census point 'replay' holds runs with arm=baseline and this crawl has "
        "arm=candidate: the runs of one point share their labels (or it would mix two arms); "
        "crawl into its own --point\n"
    )
    assert "this crawl has no labels" in _crawl(root, out, "replay")[1]
    joined = _crawl(root, out, "replay", "--shard", "2/2", "--label", "arm=baseline")
    assert joined[0] == 0, "a shard label is no label of the point's"
    assert _crawl(root, out, "replay-2", "--label", "arm=candidate")[0] == 0


def test_a_crawl_without_shard_into_a_sharded_point_is_refused(tmp_path: Path) -> None:
    """A plain crawl joined a night of shards, and check then refused the night for good
    ("holds shards 1/2 only"); stats on it said to run check, which could only refuse."""
    root, out = _corpus(tmp_path), tmp_path / "out"
    assert _crawl(root, out, "A", "--shard", "1/2")[0] == 0
    manifest = (out / "manifest.json").read_bytes()
    code, stderr = _crawl(root, out, "A")
    assert code == 2
    assert stderr == (
        "census: census point 'A' holds shards 1/2; a crawl without --shard cannot join them "
        "(the night is crawled in shards): crawl the others with --point A --shard K/2\n"
    )
    assert (out / "manifest.json").read_bytes() == manifest, "OUT is as it was"
    remedy = (
        "census: census point 'A' holds shards 1/2 only; crawl the others with --point A "
        "--shard K/N (one N for the night), then check\n"
    )
    for command in (["stats", "--run", "A"], ["check"]):
        refused = runner.invoke(app, [*command, "--out", str(out)])
        assert (refused.exit_code, refused.stderr) == (2, remedy), command
    assert _crawl(root, out, "A", "--shard", "2/2")[0] == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0


def test_a_crawl_whose_clock_is_behind_the_latest_point_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host whose clock stepped back an hour crawled the next night as a point ordered
    before the night already checked: its step back (stopping, then open) was compared with
    nothing and the night read clean, `latest` still chose the older night, and that checked
    night's stats gained a point before it (found by a hunt)."""
    root, out = _checked_then_stepped_back(tmp_path)
    manifest = (out / "manifest.json").read_bytes()

    with monkeypatch.context() as clock:
        clock.setattr(pipeline.crawl, "datetime", _Behind)
        clock.setattr(pipeline.store, "datetime", _Behind)
        for more in (["--point", "n2"], []):
            result = runner.invoke(app, ["crawl", str(root), "--out", str(out), *more])
            assert result.exit_code == 2, result.output
            assert re.fullmatch(
                r"census: this host's clock reads \S+Z, not later than census point 'n1' "
                r"started \(\S+Z\): a crawl now would be ordered before it, and compared "
                r"with nothing; set the clock right, then crawl \(if it is right, 'n1' was "
                r"crawled by a clock running ahead: drop it with census prune --point n1\)\n",
                result.stderr,
            ), result.stderr
        assert (out / "manifest.json").read_bytes() == manifest, "OUT is as it was"
    assert _crawl(root, out, "n2")[0] == 0
    checked = runner.invoke(app, ["check", "--out", str(out)])
    assert checked.exit_code == 0 and "1 finding along history" in checked.stdout, checked.stdout


def test_a_check_whose_clock_is_behind_the_last_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A point's results are its latest check's, the one with the greatest id, which starts
    with its start time: a `--recheck` on a host whose clock had stepped back wrote results
    that sorted before the ones it re-checked, so the point kept the old rules' results
    while check said it had re-checked it (found by a hunt)."""
    root, out = _corpus(tmp_path), tmp_path / "out"
    assert _crawl(root, out, "n1")[0] == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    manifest = (out / "manifest.json").read_bytes()
    with monkeypatch.context() as clock:
        clock.setattr(pipeline.store, "datetime", _Behind)
        result = runner.invoke(app, ["check", "--out", str(out), "--recheck"])
        assert result.exit_code == 2, result.output
        assert re.fullmatch(
            r"census: this host's clock reads \S+Z, not later than the last check of census "
            r"point 'n1' \(\S+Z\): its results would sort before that check's, which would "
            r"stand; set the clock right, then check\n",
            result.stderr,
        ), result.stderr
    assert (out / "manifest.json").read_bytes() == manifest, "OUT is as it was"
    with monkeypatch.context() as clock:
        clock.setattr(pipeline.store, "datetime", _Ahead)
        assert runner.invoke(app, ["check", "--out", str(out), "--recheck"]).exit_code == 0
    # A new point is decided by its own check alone: one made after n1's, re-checked by a
    # clock an hour ahead, is no re-check and sorts after nothing of its own.
    assert _crawl(root, out, "n2")[0] == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0


def _rows(out: Path, query: str) -> list[tuple[object, ...]]:
    from pipeline.engine import connect

    rows: list[tuple[object, ...]] = connect(pipeline.store.Out(str(out))).execute(query).fetchall()
    return rows


def _git_corpus(tmp_path: Path) -> Path:
    root = _corpus(tmp_path)
    make_git_repo(root / "repo")
    return root


def test_a_shard_crawled_the_other_way_is_refused(tmp_path: Path) -> None:
    """Shard 1/2 read git history and 2/2 did not: the night's commit snapshots of shard 2's
    sessions were never read, and check froze the night as whole without them (found by a
    hunt). The shard is refused, and crawled again the night's way it joins."""
    root, out = _git_corpus(tmp_path), tmp_path / "out"
    assert _crawl(root, out, "A", "--shard", "1/2", "--git-history")[0] == 0
    code, stderr = _crawl(root, out, "A", "--shard", "2/2")
    assert code == 2
    assert stderr == (
        "census: census point 'A' holds shard 1/2 crawled with --git-history; shard 2/2 cannot "
        "join it without (each shard reads its share of the night's history, so every shard "
        "of a night is crawled the same way)\n"
    )
    assert _crawl(root, out, "A", "--shard", "1/2")[0] == 0, "a shard crawled again may change"
    assert _crawl(root, out, "A", "--shard", "2/2")[0] == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    runs = _rows(out, "SELECT labels['shard'], git_history FROM runs ORDER BY run_id")
    assert runs == [("1-of-2", True), ("1-of-2", False), ("2-of-2", False)]


def test_shards_crawled_two_ways_at_once_commit_one_way(tmp_path: Path) -> None:
    """Two shards started together, one with --git-history: neither saw the other's run when
    it began, so the second to commit is refused then, and leaves nothing in OUT."""
    root, out = _git_corpus(tmp_path), tmp_path / "out"
    assert _crawl(root, out, "before")[0] == 0  # OUT exists, so its commit lock can be held
    census = [sys.executable, "-m", "pipeline.cli", "crawl", str(root), "--out", str(out)]
    night = [*census, "--point", "A"]
    with pipeline.store.Out(str(out)).commit_lock():
        shards = [
            subprocess.Popen([*night, "--shard", "1/2", "--git-history"], stderr=subprocess.PIPE),
            subprocess.Popen([*night, "--shard", "2/2"], stderr=subprocess.PIPE),
        ]
        # Both have staged their run when two runs tables wait in staging/.
        while len(list((out / "staging").glob("*/runs/*.parquet"))) < 2:
            assert all(s.poll() is None for s in shards), "a shard ended before its commit"
            time.sleep(0.05)
    ended = sorted((s.wait(timeout=120), s.communicate()[1].decode()) for s in shards)
    assert [code for code, _ in ended] == [0, 2]
    assert "--git-history; shard" in ended[1][1] and "cannot join it" in ended[1][1]
    assert not list((out / "staging").glob("*")), "the refused run left its staging"
    assert len(_rows(out, "SELECT * FROM runs WHERE point = 'A'")) == 1
