"""Edges a new user hits: `census sql` stays in its sandbox, usage errors are one line, a
session folder whose name holds a newline keeps its git history, and a path that is not
UTF-8 is detected, not an internal error."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Callable
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
    # Two nights, so that compare has two census points to compare (one against itself is
    # refused).
    for night in ("night-1", "night-2"):
        crawled = ["crawl", str(repo.parent), "--out", str(target), "--point", night]
        assert runner.invoke(app, crawled).exit_code == 0
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
        # A function of an extension DuckDB would install on the spot: refused, never damage.
        "SELECT excel_text(1, '0')",
        "SELECT * FROM tpch_queries()",
    ],
)
def test_sql_cannot_write_or_read_elsewhere(out: Path, tmp_path: Path, query: str) -> None:
    line = one_line_exit_2(["sql", query.format(tmp=tmp_path), "--out", str(out)])
    assert line.endswith(REFUSED), line
    assert list(tmp_path.iterdir()) == [], "nothing was written"


@pytest.mark.parametrize("inside", ["tables/runs/*/*.parquet", "manifest.json", "census.duckdb"])
def test_sql_naming_outs_own_files_is_refused_not_called_damage(out: Path, inside: str) -> None:
    """A query opening one of OUT's own files by path is refused by the sandbox as any path
    is; the line said "OUT is damaged … restore OUT from a copy" of a healthy OUT (found by a
    hunt)."""
    query = f"SELECT count(*) FROM read_text('{out}/{inside}')"
    line = one_line_exit_2(["sql", query, "--out", str(out)])
    assert line.endswith(REFUSED) and "damaged" not in line, line
    assert runner.invoke(app, ["sql", "SELECT 1", "--out", str(out)]).exit_code == 0


def test_sql_output_still_writes_its_file(out: Path, tmp_path: Path) -> None:
    csv = tmp_path / "topics.csv"
    query = "SELECT topic, stage FROM sessions WHERE point = selected_point() ORDER BY topic"
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


def test_sql_parquet_holds_an_interval_and_an_empty_map(out: Path, tmp_path: Path) -> None:
    """--format parquet was an internal error (exit 2, "Unhandled type for Arrow to Parquet")
    for an INTERVAL, the difference of two of the views' timestamps, and for an empty MAP,
    which csv, json and table printed (found by a hunt). The rows are written, typed."""
    import duckdb

    parquet = tmp_path / "age.parquet"
    query = (
        "SELECT run_id, now() - started_at AS age, MAP {} AS none, labels, roots, "
        "started_at FROM runs"
    )
    result = runner.invoke(
        app, ["sql", query, "--out", str(out), "-f", "parquet", "--output", str(parquet)]
    )
    assert result.exit_code == 0, result.output
    read = duckdb.sql(f"SELECT * FROM read_parquet('{parquet}')")
    types = dict(zip(read.columns, [str(t) for t in read.types], strict=True))
    assert types["age"] == "INTERVAL" and types["started_at"] == "TIMESTAMP WITH TIME ZONE"
    assert types["roots"] == "VARCHAR[]" and types["labels"] == "MAP(VARCHAR, VARCHAR)"
    counted = runner.invoke(
        app, ["sql", "SELECT count(*) AS n FROM runs", "--out", str(out), "-f", "json"]
    )
    assert len(read.fetchall()) == json.loads(counted.stdout)[0]["n"] >= 1


def test_sql_parquet_refuses_two_columns_of_one_name(out: Path, tmp_path: Path) -> None:
    """A join's two `line` went into a Parquet file with two fields of one name, exit 0, which
    pyarrow.parquet.read_table and pandas refuse to read (found by a hunt); as JSON does, the
    command now says so, exit 2, and writes nothing."""
    parquet = tmp_path / "lines.parquet"
    for query in ("SELECT 1 AS line, 2 AS line", "SELECT 1 AS Id, 2 AS id"):
        result = runner.invoke(
            app, ["sql", query, "--out", str(out), "-f", "parquet", "--output", str(parquet)]
        )
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("census: --format parquet: the result has more than one")
        assert not parquet.exists()


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
    """The cause and remedy --html and --sarif give: a folder, or a file in a missing folder,
    said "check the disk"."""
    target = tmp_path / "no-such-dir" / "x.parquet"
    line = one_line_exit_2(
        ["sql", "SELECT 1", "--out", str(out), "-f", "parquet", "--output", str(target)]
    )
    assert line == f"census: --output {target}: the folder {target.parent} does not exist"
    line = one_line_exit_2(["sql", "SELECT 1", "--out", str(out), "--output", str(tmp_path)])
    assert line == (
        f"census: --output {tmp_path} is a directory; give a file path, such as "
        f"{tmp_path / 'result.txt'}"
    )


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


# Every command that writes a file the user names, as (OUT, the path) → its arguments.
WRITERS: dict[str, Callable[[Path, Path], list[str]]] = {
    "report --html": lambda out, path: ["report", "--out", str(out), "--html", str(path)],
    "check --sarif": lambda out, path: ["check", "--out", str(out), "--sarif", str(path)],
    "compare --sarif": lambda out, path: [
        *("compare", "--out", str(out), "--baseline-run", "night-1", "--candidate-run", "night-2"),
        *("--sarif", str(path)),
    ],
    "detect --sarif": lambda out, path: [
        *("detect", str(out.parent / "corpus" / "repo" / "docs" / "research" / "demo-brainstorm")),
        *("--sarif", str(path)),
    ],
    "sql --output": lambda out, path: [
        *("sql", "SELECT 1 AS n", "--out", str(out), "-f", "csv", "--output", str(path))
    ],
}


def write_with(writer: str, out: Path, path: Path) -> None:
    result = runner.invoke(app, WRITERS[writer](out, path))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("writer", WRITERS)
def test_an_output_through_a_link_replaces_the_file_it_names(
    writer: str, out: Path, tmp_path: Path
) -> None:
    """The link stays a link and the page it names is the new one: report --html replaced the
    link with a file of its own, and the linked page was never updated."""
    (tmp_path / "pub").mkdir()
    page = tmp_path / "pub" / "page"
    page.write_text("old page\n")
    page.chmod(0o640)
    link = tmp_path / "link"
    link.symlink_to("pub/page")
    write_with(writer, out, link)
    assert link.is_symlink() and os.readlink(link) == "pub/page"
    assert page.read_text() not in ("", "old page\n")
    assert stat.S_IMODE(page.stat().st_mode) == 0o640, "the page keeps its mode"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["link", "page", "pub"]


@pytest.mark.parametrize("writer", WRITERS)
def test_an_output_into_a_named_pipe_goes_to_its_reader(
    writer: str, out: Path, tmp_path: Path
) -> None:
    """report --html replaced the pipe with a regular file, and its reader got nothing."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with subprocess.Popen(["cat", str(pipe)], stdout=subprocess.PIPE) as reader:
        try:
            write_with(writer, out, pipe)
            got, _ = reader.communicate(timeout=30)
        finally:
            reader.kill()
    assert stat.S_ISFIFO(pipe.lstat().st_mode), "the pipe is still a pipe"
    assert got.strip(), "the reader got the output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


@pytest.mark.parametrize("writer", WRITERS)
def test_an_output_leaves_the_users_own_files_beside_it(
    writer: str, out: Path, tmp_path: Path
) -> None:
    """report --html wrote PATH.tmp and deleted it: a file of the user's that census was never
    given. The output itself gets the mode any new file of the user's gets."""
    target = tmp_path / "result"
    notes = tmp_path / "result.tmp"
    notes.write_text("my notes\n")
    write_with(writer, out, target)
    assert notes.read_text() == "my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result", "result.tmp"]
    assert target.stat().st_mode == notes.stat().st_mode and target.read_text()


def test_an_output_whose_name_is_as_long_as_a_name_can_be_is_written(
    out: Path, tmp_path: Path
) -> None:
    """The temporary file beside it must fit the file system's name limit as the user's did."""
    target = tmp_path / ("r" * (os.pathconf(tmp_path, "PC_NAME_MAX") - 4) + ".csv")
    write_with("sql --output", out, target)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]
    assert target.read_text() == "n\n1\n"


def test_a_link_into_a_missing_folder_is_refused_naming_that_folder(
    out: Path, tmp_path: Path
) -> None:
    link = tmp_path / "page.html"
    link.symlink_to("gone/page.html")
    line = one_line_exit_2(["report", "--out", str(out), "--html", str(link)])
    assert line == f"census: --html {link}: the folder {tmp_path / 'gone'} does not exist"


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
    # A crawl does not enter such a folder and fails every rule of it: so does detect.
    text = runner.invoke(app, ["detect", str(session)])
    assert text.exit_code == 1 and text.stdout.splitlines()[-1] == "failing"
    assert "note . name is not valid UTF-8 (shown with U+FFFD); not read" in text.stdout
    found = json.loads(runner.invoke(app, ["detect", str(session), "--json"]).stdout)
    assert found["result"] == "failing"
    # The path too: a lone surrogate escape (\udcff) is JSON that strict readers refuse
    # (serde_json, for one), and the rows already show such bytes as U+FFFD (found by a hunt).
    assert found["path"] == str(session).encode("utf-8", "surrogateescape").decode(
        "utf-8", "replace"
    )
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in json.dumps(found, ensure_ascii=False))


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


def test_rows_alike_in_every_column_are_each_written(tmp_path: Path) -> None:
    """Row dicts travel to DuckDB as one list per column, and a column of one value as one
    value: rows alike in every column (the same link twice on one line) came back as one row.
    `census detect` now loads its rows this way too, one statement per table (its one
    statement per row took 10-25 s on a 500 KB state.md; found by a hunt)."""
    import duckdb

    from pipeline.schema import LINKS
    from pipeline.store import QueryWriter, rows_query

    row = {"snapshot_id": "s", "file": "thesis.md", "line": 3, "kind": "link", "target": "x.md"}
    con = duckdb.connect()
    query, params = rows_query(LINKS, [row, row, row])
    assert con.execute(f"SELECT count(*) FROM ({query})", params).fetchone() == (3,)
    writer = QueryWriter(con, tmp_path, [LINKS])
    writer.add_rows(LINKS.name, [row, row])
    writer.close()
    assert pq.read_table(tmp_path / LINKS.name / "part-0.parquet").num_rows == 2
