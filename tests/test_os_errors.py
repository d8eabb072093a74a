"""When the machine misbehaves: a full disk, a read-only OUT, a permission, too few file
descriptors. Each is one line naming the path and what to do, exit 2; OUT reads as before;
and a run that committed exits 0 with a warning when a step after its commit failed, which
the next command repairs.

The full-disk and read-only tests mount a small tmpfs as OUT's disk (they skip, saying why,
where mounting is not permitted); the permission test drops root's override of file modes
with setpriv; the open-files test lowers RLIMIT_NOFILE in the child process.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.aftercommit import is_fresh
from pipeline.cli import app
from pipeline.errors import OutError, system_failure
from pipeline.resources import queries_dir
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree, fill

runner = CliRunner()
CENSUS = str(Path(sys.executable).parent / "census")
REPOS = ("acme-checkout", "orbit-api", "lumen-docs")
AGAIN = "and run the command again"


def test_each_os_error_class_is_one_line_with_its_path_and_remedy() -> None:
    lines = {
        OSError(28, "No space left on device", "/o/x"): (
            "no space left on the device holding /o/x; free space there "
            f"(or give --out on a disk with room), {AGAIN}"
        ),
        OSError(122, "Disk quota exceeded", "/o/x"): (
            "no space left on the device holding /o/x; free space there "
            f"(or give --out on a disk with room), {AGAIN}"
        ),
        PermissionError(13, "Permission denied", "/o/.lock"): (
            "permission denied on /o/.lock; give this user access to it "
            f"(or use another --out), {AGAIN}"
        ),
        PermissionError(1, "Operation not permitted", "/o/.lock"): (
            "permission denied on /o/.lock; give this user access to it "
            f"(or use another --out), {AGAIN}"
        ),
        OSError(30, "Read-only file system", "/o/.lock"): (
            f"/o/.lock is on a read-only file system; give an --out on a writable disk, {AGAIN}"
        ),
        OSError(24, "Too many open files", "/o/t.parquet"): (
            "too many open files, opening /o/t.parquet; raise the limit (ulimit -n 4096) or "
            f"lower --workers, {AGAIN}"
        ),
        OSError(23, "Too many open files in system", "/o/t.parquet"): (
            "too many open files, opening /o/t.parquet; raise the limit (ulimit -n 4096) or "
            f"lower --workers, {AGAIN}"
        ),
        OSError(5, "Input/output error", "/o/t.parquet"): (
            "Input/output error: /o/t.parquet; check the disk (--debug shows where census was), "
            f"{AGAIN}"
        ),
    }
    for err, line in lines.items():
        assert str(system_failure(err, "/o")) == line  # OUT is /o: the files lie in it


def test_errors_that_name_no_path_name_out_and_duckdb_errors_are_read_from_their_text() -> None:
    # pyarrow's failed write carries the errno but no file name: OUT is named instead.
    arrow = OSError(28, "Error writing bytes to file. Detail: [errno 28] No space left on device")
    assert str(system_failure(arrow, "/srv/out")).startswith(
        "no space left on the device holding /srv/out;"
    )
    # DuckDB gives no errno; its message names the file in double quotes.
    wal = duckdb.TransactionException(
        'TransactionContext Error: Failed to commit: Could not write file "/srv/out/c.wal": '
        "No space left on device"
    )
    assert str(system_failure(wal, "/srv/out")).startswith(
        "no space left on the device holding /srv/out/c.wal;"
    )
    io = duckdb.IOException('IO Error: Cannot open file "/srv/out/x": Permission denied')
    assert str(system_failure(io)).startswith("permission denied on /srv/out/x;")
    assert system_failure(ValueError("not an OS error")) is None
    assert system_failure(OutError("already one line")) is None
    assert system_failure(duckdb.BinderException("no such column")) is None


def census(*args: str, preexec_fn: Callable[[], None] | None = None) -> Any:
    """The installed census in a process of its own (limits set in it by preexec_fn)."""
    return subprocess.run(
        [CENSUS, *args], capture_output=True, text=True, timeout=600, preexec_fn=preexec_fn
    )


def crawl_args(corpus: Path, out: Path, repos: tuple[str, ...] = REPOS) -> list[str]:
    return ["crawl", *(str(corpus / r) for r in repos), "--out", str(out)]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    for name in REPOS:
        copy_tree(FIXTURES / "example" / name, tmp_path / "corpus" / name)
    return tmp_path / "corpus"


def rows(out: Path) -> int:
    result = runner.invoke(
        app, ["sql", "SELECT count(*) AS n FROM observations", "--out", str(out), "-f", "json"]
    )
    assert result.exit_code == 0, result.output
    return int(json.loads(result.stdout)[0]["n"])


def test_a_failed_step_after_the_commit_warns_and_the_next_command_repairs_it(
    corpus: Path, tmp_path: Path
) -> None:
    """census.duckdb cannot be written (a directory sits where its temporary file goes): the
    crawl still exits 0, its run is in OUT, and the next reader rebuilds census.duckdb."""
    out = tmp_path / "out"
    assert runner.invoke(app, crawl_args(corpus, out, REPOS[:1])).exit_code == 0
    blocker = out / "census.duckdb.tmp"
    (blocker / "inside").mkdir(parents=True)
    result = runner.invoke(app, crawl_args(corpus, out))
    assert result.exit_code == 0, result.output
    warning = result.stderr.strip().splitlines()
    assert len(warning) == 1
    assert re.fullmatch(
        r"census: warning: run \S+ is committed, but OUT/census\.duckdb could not be written "
        rf"\(Is a directory: {re.escape(str(blocker))}\); check the disk; the next census "
        r"command that reads OUT rebuilds census\.duckdb",
        warning[0],
    ), warning[0]
    assert rows(out) == 4 + 12, "both runs are in OUT"
    assert not is_fresh(Out(out))
    still = runner.invoke(app, ["sql", "SELECT count(*) FROM runs", "--out", str(out)])
    assert still.exit_code == 0, still.output
    assert still.stderr.startswith(f"census: warning: {out / 'census.duckdb'} is out of date")
    shutil.rmtree(blocker)
    repaired = runner.invoke(app, ["sql", "SELECT 1", "--out", str(out)])
    assert repaired.exit_code == 0 and repaired.stderr == ""
    assert is_fresh(Out(out))
    con = duckdb.connect(str(out / "census.duckdb"), read_only=True)
    con.execute(f"SET file_search_path = '{out}'")
    assert con.execute("SELECT count(*) FROM observations").fetchone() == (16,)


@pytest.mark.slow
def test_full_disk(corpus: Path, small_disk: Path) -> None:
    out = small_disk / "out"
    assert runner.invoke(app, crawl_args(corpus, out, REPOS[:2])).exit_code == 0
    before = (out / "manifest.json").read_bytes()
    seen = rows(out)

    filler = fill(small_disk)
    failed = runner.invoke(app, crawl_args(corpus, out))
    assert failed.exit_code == 2
    assert failed.stdout == ""
    line = failed.stderr.strip()
    assert "\n" not in line
    assert line.startswith(f"census: no space left on the device holding {out}"), line
    assert line.endswith(f"free space there (or give --out on a disk with room), {AGAIN}")
    assert (out / "manifest.json").read_bytes() == before, "OUT reads as before"
    assert rows(out) == seen

    filler.unlink()
    again = runner.invoke(app, crawl_args(corpus, out))
    assert again.exit_code == 0 and again.stderr == "", again.output
    assert rows(out) == seen + 12

    # Room for the run but not for census.duckdb: the run commits, the crawl warns, exit 0.
    state = corpus / "lumen-docs" / "docs" / "research" / "dark-mode-brainstorm" / "state.md"
    state.write_text(state.read_text() + "\n")
    fill(small_disk, leave=(out / "census.duckdb").stat().st_size * 2 // 3)
    warned = runner.invoke(app, crawl_args(corpus, out))
    assert warned.exit_code == 0, warned.output
    assert re.fullmatch(
        r"census: warning: run \S+ is committed, but OUT/census\.duckdb could not be written "
        rf"\(no space left on the device holding {re.escape(str(out))}\S*\); free space there; "
        r"the next census command that reads OUT rebuilds census\.duckdb\n",
        warned.stderr,
    ), warned.stderr
    assert not list(out.glob("census.duckdb.tmp*")), "its temporary files are removed"
    assert rows(out) == seen + 24
    assert not is_fresh(Out(out))
    filler.unlink()
    assert rows(out) == seen + 24
    assert is_fresh(Out(out)), "the next command rebuilt census.duckdb"


@pytest.mark.slow
def test_read_only_out(corpus: Path, small_disk: Path) -> None:
    out = small_disk / "out"
    assert runner.invoke(app, crawl_args(corpus, out, REPOS[:1])).exit_code == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        for args in (crawl_args(corpus, out), ["check", "--out", str(out), "--recheck"]):
            result = runner.invoke(app, args)
            assert result.exit_code == 2
            assert result.stderr == (
                f"census: {out / '.lock'} is on a read-only file system; give an --out on a "
                f"writable disk, {AGAIN}\n"
            )
        reader = runner.invoke(app, ["sql", "SELECT count(*) FROM runs", "--out", str(out)])
        assert reader.exit_code == 0 and reader.stderr == "", "reading a read-only OUT works"
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)


def test_permission_denied(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert runner.invoke(app, crawl_args(corpus, out, REPOS[:1])).exit_code == 0
    before = (out / "manifest.json").read_bytes()
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root ignores file modes, and there is no setpriv to drop that")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
    out.chmod(0o555)
    try:
        done = subprocess.run(
            [*prefix, CENSUS, *crawl_args(corpus, out)], capture_output=True, text=True
        )
    finally:
        out.chmod(0o755)
    assert done.returncode == 2
    assert re.fullmatch(
        rf"census: permission denied on {re.escape(str(out))}/\S+; give this user access to "
        rf"it \(or use another --out\), {AGAIN}\n",
        done.stderr,
    ), done.stderr
    assert (out / "manifest.json").read_bytes() == before
    assert runner.invoke(app, crawl_args(corpus, out)).exit_code == 0


@pytest.mark.slow
def test_too_many_open_files(corpus: Path, tmp_path: Path) -> None:
    """A check under ever higher file-descriptor limits: each try fails with the one line, or
    succeeds; none is an internal error. A try that commits the check and then runs out while
    printing the rates first says, in warnings, what was committed and what was not rebuilt.
    The file named is in OUT or among the shipped queries: the lifetimes thread reads its SQL
    while the main thread opens OUT, so which one runs out first is a race (CI hit both)."""
    out = tmp_path / "out"
    assert runner.invoke(app, crawl_args(corpus, out, REPOS[:1])).exit_code == 0
    opened = f"(?:{re.escape(str(out))}|{re.escape(str(queries_dir()))}/)"
    outcomes = []
    for limit in range(6, 17):

        def lower(limit: int = limit) -> None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

        done = census("check", "--out", str(out), preexec_fn=lower)
        outcomes.append(done.returncode)
        if done.returncode == 0:
            assert all(line.startswith("census: warning:") for line in done.stderr.splitlines())
            break
        assert done.returncode == 2, done.stderr
        *warnings, error = done.stderr.splitlines()
        assert all(line.startswith("census: warning: ") for line in warnings), done.stderr
        assert re.fullmatch(
            rf"census: too many open files, opening {opened}\S*; raise the limit "
            rf"\(ulimit -n 4096\) or lower --workers, {AGAIN}",
            error,
        ), done.stderr
    assert outcomes[0] == 2 and outcomes[-1] == 0, outcomes


@pytest.mark.parametrize("buffered", [False, True])
def test_standard_output_that_cannot_be_written_is_named_and_not_blamed_on_out(
    corpus: Path, tmp_path: Path, buffered: bool
) -> None:
    """Standard output on a full disk (here /dev/full) was told as "no space left on the device
    holding OUT …, give --out on a disk with room", though the crawl and check had committed and
    sql only reads OUT (found by a hunt). Buffered, as a user's shell gives it, the output left
    in the buffer failed again at exit: a traceback and exit 120 (found by another session)."""
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env.update({} if buffered else {"PYTHONUNBUFFERED": "1"})

    def full(*args: str) -> subprocess.CompletedProcess[str]:
        with open("/dev/full", "w") as sink:
            return subprocess.run(
                [CENSUS, *args],
                stdout=sink,
                stderr=subprocess.PIPE,
                text=True,
                timeout=600,
                env=env,
            )

    said = "census: no space left on the device holding standard output: the output is incomplete"
    committed = "; OUT holds this command's writes, committed before it"
    for args, held in [
        (crawl_args(corpus, out), committed),
        (["check", "--out", str(out)], committed),
        (["sql", "SELECT 1", "--out", str(out)], ""),
    ]:
        done = full(*args)
        assert done.returncode == 2, done.stderr
        assert done.stderr.splitlines() == [f"{said}{held}; send it where it can be written"]
    assert rows(out) > 0
