"""Edges a new user hits: `census sql` stays in its sandbox, usage errors are one line, a
session folder whose name holds a newline keeps its git history, and a path that is not
UTF-8 is detected, not an internal error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.schema import TABLES, VIEWS
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree, git

runner = CliRunner()
BASE = FIXTURES / "cases" / "base"
REFUSED = "census sql reads only OUT's tables and writes only --output FILE"


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("edges")
    repo = copy_tree(BASE / "open" / "repo", root / "corpus" / "repo")
    target = root / "out"
    assert runner.invoke(app, ["crawl", str(repo.parent), "--out", str(target)]).exit_code == 0
    assert runner.invoke(app, ["check", "--out", str(target)]).exit_code == 0
    return target


def one_line_exit_2(args: list[str]) -> str:
    result = runner.invoke(app, args, prog_name="census")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("census: "), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return lines[0]


@pytest.mark.parametrize(
    "query",
    [
        "COPY (SELECT 1) TO '{tmp}/x.csv'",
        "COPY runs TO '{tmp}/x.parquet' (FORMAT parquet)",
        "EXPORT DATABASE '{tmp}/dump'",
        "ATTACH '{tmp}/x.duckdb' AS x",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM glob('/etc/*')",
        "SET enable_external_access = true",
        "INSTALL httpfs",
        "LOAD httpfs",
    ],
)
def test_sql_cannot_write_or_read_elsewhere(out: Path, tmp_path: Path, query: str) -> None:
    line = one_line_exit_2(["sql", query.format(tmp=tmp_path), "--out", str(out)])
    assert line.endswith(REFUSED), line
    assert list(tmp_path.iterdir()) == [], "nothing was written"


def test_sql_output_still_writes_its_file(out: Path, tmp_path: Path) -> None:
    csv = tmp_path / "topics.csv"
    query = "SELECT topic, stage FROM sessions ORDER BY topic"
    result = runner.invoke(
        app, ["sql", query, "--out", str(out), "--format", "csv", "--output", str(csv)]
    )
    assert result.exit_code == 0 and result.stdout == "", result.output
    assert csv.read_text().splitlines() == ["topic,stage", "demo,open"]
    parquet = tmp_path / "rates.parquet"
    query = "SELECT rule_id, rate FROM rule_rates WHERE point = selected_point()"
    result = runner.invoke(
        app, ["sql", query, "--out", str(out), "-f", "parquet", "--output", str(parquet)]
    )
    assert result.exit_code == 0, result.output
    assert pq.read_table(parquet).num_rows >= 10


def test_sql_reads_every_table_and_view(out: Path) -> None:
    """Every name docs/tables.md documents answers through the sandbox."""
    for name in [*TABLES, *VIEWS]:
        result = runner.invoke(
            app, ["sql", f'SELECT count(*) AS n FROM "{name}"', "--out", str(out), "-f", "json"]
        )
        assert result.exit_code == 0, (name, result.output)
        assert json.loads(result.stdout)[0]["n"] >= 0
    sessions = runner.invoke(app, ["sql", "SELECT topic FROM sessions", "--out", str(out)])
    assert "demo" in sessions.stdout


def test_sql_output_to_an_unwritable_place_is_one_line(out: Path, tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "x.csv"
    line = one_line_exit_2(["sql", "SELECT 1", "--out", str(out), "--output", str(target)])
    assert str(target) in line


def test_a_report_onto_a_directory_is_one_line_and_leaves_nothing(
    out: Path, tmp_path: Path
) -> None:
    target = tmp_path / "a-dir"
    target.mkdir()
    line = one_line_exit_2(["report", "--out", str(out), "--html", str(target)])
    assert (
        line
        == f"census: --html {target} is a directory; give a file path, such as {target}/report.html"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-dir"], "no .tmp left beside it"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["detect"], "census: Missing argument 'session_dir'. (see 'census detect --help')"),
        (
            ["check", "--bogus"],
            "census: No such option: --bogus (Possible options: --out) (see 'census check --help')",
        ),
        (["--bogus"], "census: No such option: --bogus (see 'census --help')"),
        (
            ["detect", "x", "--gate", "nope"],
            "census: Invalid value for '--gate': 'nope' is not one of 'session', 'manifest', "
            "'move'. (see 'census detect --help')",
        ),
        (["--debug"], "census: Missing command. (see 'census --help')"),
        (["nosuch"], "census: No such command 'nosuch'. (see 'census --help')"),
        (
            ["detect", "x", "--gate"],
            "census: Option '--gate' requires an argument. (see 'census detect --help')",
        ),
        (
            ["--debug", "check", "--fail-above"],
            "census: Option '--fail-above' requires an argument. (see 'census check --help')",
        ),
        (
            ["check", "surplus"],
            "census: Got unexpected extra argument(s) (surplus) (see 'census check --help')",
        ),
        (
            ["crawl", "x", "--workers", "0"],
            "census: Invalid value for '--workers': 0 is not in the range x>=1. "
            "(see 'census crawl --help')",
        ),
        (
            ["run", "x", "--workers", "-3"],
            "census: Invalid value for '--workers': -3 is not in the range x>=1. "
            "(see 'census run --help')",
        ),
    ],
)
def test_usage_errors_are_one_line(args: list[str], expected: str) -> None:
    assert one_line_exit_2(args) == expected


def test_bare_census_shows_the_help() -> None:
    result = runner.invoke(app, [], prog_name="census")
    assert "Usage: census" in result.output and "crawl" in result.output


def test_git_history_keeps_a_folder_whose_name_holds_a_newline(tmp_path: Path) -> None:
    """git log quotes such a name unless asked for NUL-separated output (-z)."""
    repo = copy_tree(BASE / "open" / "repo", tmp_path / "root" / "repo")
    odd = repo / "docs" / "research" / "two\nlines-brainstorm"
    (repo / "docs" / "research" / "demo-brainstorm").rename(odd)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "open", env={"GIT_COMMITTER_DATE": "2026-07-08T15:00:00Z"})
    state = odd / "state.md"
    state.write_text(state.read_text().replace("Status: open", "Status: stopping"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "stop", env={"GIT_COMMITTER_DATE": "2026-07-09T15:00:00Z"})
    out = Out(tmp_path / "out")
    summary = crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    assert summary.history == 2
    rows = (
        connect(out)
        .execute('SELECT topic, "commit" IS NOT NULL FROM observations ORDER BY observed_at')
        .fetchall()
    )
    assert rows == [("two\nlines", True), ("two\nlines", True), ("two\nlines", False)]


def test_detect_on_a_path_that_is_not_utf8(tmp_path: Path) -> None:
    """A folder named with byte 0xff: a real detection (the name shows as U+FFFD in output)."""
    parent = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/repo-\xff"))
    repo = copy_tree(BASE / "open" / "repo", parent)
    folder = repo / "docs" / "research" / "demo-brainstorm"
    session = folder.rename(
        Path(os.fsdecode(os.fsencode(str(folder)).replace(b"demo", b"d\xffmo")))
    )
    for extra in ([], ["--json"], ["--gate", "move"]):
        result = runner.invoke(app, ["detect", str(session), *extra])
        assert result.exit_code in (0, 1), result.output
        assert "internal error" not in result.output
    text = runner.invoke(app, ["detect", str(session)])
    assert text.exit_code == 0 and text.stdout.splitlines()[-1] == "clean"
    found = json.loads(runner.invoke(app, ["detect", str(session), "--json"]).stdout)
    assert found["result"] == "clean"


def test_sql_csv_writes_lists_and_maps_whole_on_one_line(out: Path) -> None:
    """A list or map cell as DuckDB spells it, every element kept: not a numpy repr that
    wraps over lines and elides the middle of a long list."""
    query = (
        "SELECT range(2000) AS xs, MAP {'team': 'platform'} AS labels, "
        "CAST(NULL AS INTEGER) AS missing, 7 AS n, 'a,b' AS text"
    )
    result = runner.invoke(app, ["sql", query, "--out", str(out), "--format", "csv"])
    assert result.exit_code == 0, result.output
    header, row = result.stdout.splitlines()
    assert header == "xs,labels,missing,n,text"
    assert row == '"[' + ", ".join(map(str, range(2000))) + ']",{team=platform},,7,"a,b"'
