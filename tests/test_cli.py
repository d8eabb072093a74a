"""The `census` commands through Typer's CliRunner: exit codes and output."""

from __future__ import annotations

import json
import os
import re
import shutil
import unicodedata
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.engine import connect
from pipeline.store import Out
from pipeline.textout import pct_above, pct_exact
from tests.conftest import FIXTURES, checked_rows, copy_tree, fill, git, make_git_repo

runner = CliRunner()
BASE = FIXTURES / "cases" / "base"
HARVESTED_DEMO = BASE / "harvested" / "repo" / "docs" / "history" / "brainstorms" / "demo"


@pytest.fixture
def open_session(tmp_path: Path) -> Path:
    """A copy outside this project's git repository, which tracks the fixtures' ops/ files."""
    repo = copy_tree(BASE / "open" / "repo", tmp_path / "plain" / "repo")
    return repo / "docs" / "research" / "demo-brainstorm"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    for stage in ("open", "converging", "applied", "harvested"):
        copy_tree(BASE / stage / "repo", root / f"team-{stage}")
    return root


@pytest.fixture
def crawled(corpus: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    result = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--label", "run=one"])
    assert result.exit_code == 0, result.output
    return out


def test_crawl_prints_a_summary(corpus: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["crawl", str(corpus), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0
    assert "4 sessions, 4 new snapshots" in result.output
    assert "parse issues" in result.output


def test_crawl_of_a_missing_root_is_one_line_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["crawl", str(tmp_path / "nope"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_bad_label_is_exit_2(corpus: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["crawl", str(corpus), "--out", str(tmp_path / "o"), "--label", "x"]
    )
    assert result.exit_code == 2
    assert "not k=v" in result.output


@pytest.mark.parametrize(
    ("command", "option", "example"),
    [
        ("compare", "--baseline", "run=baseline"),
        ("compare", "--candidate", "run=candidate"),
        ("report", "--baseline", "run=baseline"),
        ("stats", "--label", "run=baseline"),
    ],
)
def test_a_bad_label_names_the_option_given(
    crawled: Path, command: str, option: str, example: str
) -> None:
    """compare --baseline bad suggested `--label run=baseline`, an option compare lacks."""
    args = [command, "--out", str(crawled), option, "bad"]
    if command == "report":
        args += ["--candidate", "run=candidate"]
    result = runner.invoke(app, args)
    assert (result.exit_code, result.stderr) == (
        2,
        f"census: label 'bad' is not k=v; write {option} {example}\n",
    )


def test_check_prints_rates_and_writes_sarif(crawled: Path, tmp_path: Path) -> None:
    sarif = tmp_path / "census.sarif"
    result = runner.invoke(app, ["check", "--out", str(crawled), "--sarif", str(sarif)])
    assert result.exit_code == 0, result.output
    assert "BS-FORK-03" in result.output
    assert "Rule-failure rates" in result.output
    log = json.loads(sarif.read_text())
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert len(rule_ids) == 19 and rule_ids == sorted(rule_ids)
    # Each session at its own gate: the healthy bases fail only what their stage implies.
    failing = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in run["results"]
        if r["level"] == "error"
    }
    assert failing == set(), failing


def test_check_at_a_gate_writes_the_findings_of_the_rates_it_prints(
    crawled: Path, tmp_path: Path
) -> None:
    """`check --gate manifest --sarif` printed every session's rates at the manifest gate but
    wrote each session's own-gate findings: none for the open session's open forks, and move
    gate findings the table left out (found by a hunt)."""
    sarif = tmp_path / "census.sarif"
    args = ["check", "--out", str(crawled), "--gate", "manifest", "--sarif", str(sarif)]
    assert runner.invoke(app, args).exit_code == 0
    failing: dict[str, set[tuple[int, str]]] = {}
    for index, run in enumerate(json.loads(sarif.read_text())["runs"]):
        for r in run["results"]:
            if r["level"] == "error":
                uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                folder = re.match(r"docs/research/[^/]+|docs/history/brainstorms/[^/]+", uri)
                assert folder is not None, uri
                failing.setdefault(r["ruleId"], set()).add((index, folder[0]))
    rates = (
        connect(Out(crawled))
        .execute(
            "SELECT rule_id, failed FROM rule_rates_at_gate WHERE gate = 'manifest' AND failed > 0"
        )
        .fetchall()
    )
    assert rates and {rule: len(folders) for rule, folders in failing.items()} == dict(rates)


def test_rule_results_hold_each_gate_s_rules_as_detect_lists_them(
    crawled: Path, corpus: Path
) -> None:
    """A maintainer's `WHERE gate = 'manifest'` on rule_results is what the manifest gate
    decides (spec §6: one row per snapshot, gate and rule). rule_results held one row per rule,
    at its own gate: the manifest gate's rows left out every session-gate rule, and a query
    for sessions that would already pass it counted sessions failing BS-FORK-01."""
    assert runner.invoke(app, ["check", "--out", str(crawled)]).exit_code == 0
    con = connect(Out(crawled))
    sessions = con.execute(
        "SELECT DISTINCT snapshot_id, repo || '/' || path FROM observations"
    ).fetchall()
    for gate in ("session", "manifest", "move"):
        for snapshot_id, folder in sessions:
            stored = con.execute(
                "SELECT rule_id, CASE WHEN bool_or(status = 'fail') THEN 'fail' "
                "ELSE any_value(status) END FROM rule_results "
                "WHERE snapshot_id = ? AND gate = ? GROUP BY rule_id",
                [snapshot_id, gate],
            ).fetchall()
            shown = runner.invoke(app, ["detect", str(corpus / folder), "--gate", gate, "--json"])
            listed = {r["rule"]: r["status"] for r in json.loads(shown.output)["rules"]}
            assert dict(stored) == listed, (gate, folder)


def test_check_fail_above_exits_1_and_names_the_rule(tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    roots = sorted(str(p) for p in (FIXTURES / "example").iterdir() if p.name != "README.md")
    assert runner.invoke(app, ["crawl", *roots, "--out", out]).exit_code == 0
    calm = runner.invoke(app, ["check", "--out", out, "--fail-above", "1"])
    assert calm.exit_code == 0 and calm.stderr == ""
    assert "no alarm" in calm.stdout and "above 100.0%: none" in calm.stdout
    # BS-USELESS-01 fails its one applied session: 100%, above any threshold below 1.
    hot = runner.invoke(app, ["check", "--out", out, "--fail-above", "0.5"])
    assert hot.exit_code == 1
    alarms = hot.stderr.strip().splitlines()
    assert alarms and all(line.startswith("census: BS-") for line in alarms)
    assert any("BS-USELESS-01" in line and "100.0% (1/1), above 50.0%" in line for line in alarms)
    assert "BS-USELESS-01" in hot.stdout.strip().splitlines()[-1], "the closing line names it"
    for bad in ("1.5", "-0.1"):
        wrong = runner.invoke(app, ["check", "--out", out, "--fail-above", bad])
        assert wrong.exit_code == 2 and "between 0 and 1" in wrong.output


def _checked_above(tmp_path: Path, threshold: str) -> tuple[Any, str]:
    """`census check --fail-above THRESHOLD` on the example corpus, which trips it on
    BS-USELESS-01 (1/1): the result and BS-USELESS-01's line of it."""
    out = str(tmp_path / "out")
    roots = sorted(str(p) for p in (FIXTURES / "example").iterdir() if p.name != "README.md")
    assert runner.invoke(app, ["crawl", *roots, "--out", out]).exit_code == 0
    hot = runner.invoke(app, ["check", "--out", out, "--fail-above", threshold])
    assert hot.exit_code == 1
    return hot, next(x for x in hot.stderr.splitlines() if "BS-USELESS-01" in x)


def test_a_rate_just_above_the_threshold_reads_above_it(tmp_path: Path) -> None:
    """The alarm gave the rate and the threshold at one decimal: BS-USELESS-01's 1/1 above
    --fail-above 0.9999 read '100.0% (1/1), above 100.0%', and a 5.38% above 0.0536 read
    '5.4%, above 5.4%'. The threshold is shown as given, the rate where it reads above it."""
    hot, line = _checked_above(tmp_path, "0.9999")
    assert line.endswith("is 100.0% (1/1), above 99.99%"), line
    assert "; above 99.99%: BS-USELESS-01" in hot.stdout.strip().splitlines()[-1]
    assert pct_above(5 / 93, 0.0536) == "5.38%" and pct_exact(0.0536) == "5.36%"
    assert pct_above(0.05004, 0.05) == "5.004%" and pct_exact(0.05) == "5.0%"


def test_a_threshold_with_many_decimals_reads_as_given_and_the_rate_above_it(
    tmp_path: Path,
) -> None:
    """The threshold was shown with at most six decimals: BS-USELESS-01's 1/1 above
    --fail-above 0.999999999 read '100.0% (1/1), above 100.000000%', a rate above itself, and
    --fail-above 1e-9 read 'above 0.000000%', a threshold of zero (found by a hunt)."""
    _, line = _checked_above(tmp_path, "0.999999999")
    assert line.endswith("is 100.0% (1/1), above 99.9999999%"), line
    assert pct_exact(1e-9) == "0.0000001%"
    assert pct_above(20 / 164, 0.1219512195) == "12.195121951%"
    assert pct_exact(0.1219512195) == "12.19512195%"


def test_check_without_a_crawl_is_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", "--out", str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert "holds no census runs" in result.output


def test_an_out_that_is_a_file_is_refused_in_one_line(tmp_path: Path) -> None:
    """It said "File exists" and to check the disk, as for a machine's failure."""
    out = tmp_path / "out.txt"
    out.write_text("notes\n")
    root = str(FIXTURES / "example")
    for command in (["crawl", root], ["run", root], ["check"], ["stats"], ["report"]):
        result = runner.invoke(app, [*command, "--out", str(out)])
        assert result.exit_code == 2, (command, result.output)
        assert (
            result.stderr.strip()
            == f"census: {out} is a file, not a folder; give --out a folder for OUT"
        )
    assert out.read_text() == "notes\n"


def test_detect_clean_session_exit_0(open_session: Path) -> None:
    result = runner.invoke(app, ["detect", str(open_session)])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[-1] == "clean"
    assert "BS-FORK-01 pass" in lines
    assert "BS-OPS-02 skipped no git context" in lines
    assert not any(line.startswith("BS-FORK-03") for line in lines), (
        "manifest-gate rule at session gate"
    )


def test_detect_with_a_sarif_path_it_cannot_write_prints_no_verdict(
    open_session: Path, tmp_path: Path
) -> None:
    # 'clean' above an exit 2 read as the result; the error is the whole answer.
    sarif = tmp_path / "no-such-folder" / "out.sarif"
    result = runner.invoke(app, ["detect", str(open_session), "--sarif", str(sarif)])
    assert result.exit_code == 2
    assert "clean" not in result.stdout and "pass" not in result.stdout
    assert "no-such-folder" in result.output
    # Said as check says it (the write's own error read "check the disk"), and a path inside
    # the session folder is refused: the census never writes in what it reads.
    for path, line in (
        (tmp_path, f"--sarif {tmp_path} is a directory; give a file path, such as "),
        (open_session / "r.sarif", "lies inside the session folder"),
    ):
        result = runner.invoke(app, ["detect", str(open_session), "--sarif", str(path)])
        assert result.exit_code == 2 and line in result.stderr, result.stderr
    assert not (open_session / "r.sarif").exists()


@pytest.mark.parametrize("command", [["crawl", "{other}"], ["run", "{other}"]])
def test_no_out_is_made_in_a_session_folder_of_a_repository_not_crawled(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """`census run` from inside a session folder, crawling another root, made ./census-out
    there, and the next crawl of that repository read OUT's files as the session's own (§12;
    found by a hunt): only an OUT in a session folder of a crawled root was refused."""
    session = next(corpus.glob("team-open/docs/research/*-brainstorm"))
    other = tmp_path / "other"
    copy_tree(BASE / "applied" / "repo", other / "team-applied")
    before = sorted(p.name for p in session.iterdir())
    monkeypatch.chdir(session)
    args = [part.replace("{other}", str(other)) for part in command]
    result = runner.invoke(app, [*args, "--out", "o"] if command[0] == "crawl" else args)
    assert result.exit_code == 2, result.output
    assert f"lies in the session folder {session}, where a crawl" in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert sorted(p.name for p in session.iterdir()) == before


@pytest.mark.parametrize(
    "command",
    [
        ["check", "--sarif", "{file}"],
        ["report", "--html", "{file}"],
        ["sql", "SELECT 1", "--format", "csv", "--output", "{file}"],
    ],
)
def test_no_command_writes_its_output_into_a_session_folder(
    crawled: Path, corpus: Path, command: list[str]
) -> None:
    """The census never writes in what it reads (§12): a file written into a session folder
    was read by the next crawl as the session's own (a SARIF as ops/manifest.md failed
    BS-MANIFEST-01; found by a hunt), as `detect --sarif` there already refused."""
    assert runner.invoke(app, ["check", "--out", str(crawled)]).exit_code == 0
    session = next(corpus.glob("*/docs/research/*-brainstorm"))
    target = session / "ops" / "manifest.md"
    before = target.read_bytes() if target.exists() else None
    args = [part.replace("{file}", str(target)) for part in command]
    result = runner.invoke(app, [*args, "--out", str(crawled)])
    assert result.exit_code == 2, result.output
    assert f"lies inside the session folder {session}; give a path outside it" in result.stderr
    assert (target.read_bytes() if target.exists() else None) == before


def _rule_everywhere(session: Path, crawl_root: Path, rule: str) -> tuple[str, list[str]]:
    """A rule's status from detect, and its statuses from crawl+check of crawl_root."""
    detected = runner.invoke(app, ["detect", str(session), "--json"])
    found = {r["rule"]: r["status"] for r in json.loads(detected.stdout)["rules"]}
    out = crawl_root.parent / "out"
    assert runner.invoke(app, ["crawl", str(crawl_root), "--out", str(out)]).exit_code == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    con = connect(Out(out))
    checked = con.execute("SELECT status FROM statuses WHERE rule_id = ?", [rule]).fetchall()
    return found[rule], [status for (status,) in checked]


@pytest.mark.parametrize("git_top", ["repo", "docs", "session"])
def test_detect_and_check_agree_on_where_git_starts(open_session: Path, git_top: str) -> None:
    """A tracked ops/ file fails BS-OPS-02 whichever working tree's index tracks it: the one
    holding the repository, or one nested in it (at docs/, or the session folder itself), in
    detect as in check. Before, a nested one gave no git context: skipped in detect and in
    check, though git tracked the file (found by a hunt)."""
    repo = open_session.parents[2]
    top = {"repo": repo, "docs": repo / "docs", "session": open_session}[git_top]
    make_git_repo(top, force_add=[str(open_session / "ops" / "capture.md")])
    assert _rule_everywhere(open_session, repo, "BS-OPS-02") == ("fail", ["fail"])


def _submodule_at(super_repo: Path, folder: Path, track_ops: bool) -> None:
    """`folder` (inside super_repo) made a git submodule of super_repo, ops/ tracked or not."""
    source = super_repo.parent / f"source-{folder.name}"
    shutil.move(str(folder), str(source))
    make_git_repo(source, force_add=[str(p) for p in source.rglob("ops/*")] if track_ops else [])
    (super_repo / "README.md").write_text("superproject\n")
    make_git_repo(super_repo)
    add = ("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source))
    git(super_repo, *add, str(folder.relative_to(super_repo)))
    git(super_repo, "commit", "-qm", "submodule")


@pytest.mark.parametrize("at", ["repository", "docs", "session"])
@pytest.mark.parametrize("track_ops", [True, False], ids=["tracked", "untracked"])
def test_a_submodule_decides_bs_ops_02_alike_in_detect_and_check(
    open_session: Path, at: str, track_ops: bool
) -> None:
    """A session in a git submodule (the repository holding docs/, docs/ itself, or the
    session folder) has its ops/ files tracked, or not, by the submodule's index: BS-OPS-02
    fails or passes on it in detect and in a crawl of the superproject. Before, a submodule
    at docs/ or at the session folder passed in check and was skipped in detect, its tracked
    ops/ files unseen (found by a hunt)."""
    repo = open_session.parents[2]
    superproject = repo.parent
    folder = {"repository": repo, "docs": repo / "docs", "session": open_session}[at]
    _submodule_at(superproject if at == "repository" else repo, folder, track_ops)
    assert (folder / ".git").is_file()
    expected = "fail" if track_ops else "pass"
    assert _rule_everywhere(open_session, superproject, "BS-OPS-02") == (expected, [expected])


@pytest.mark.parametrize("at", ["repository", "session"])
def test_a_submodule_git_cannot_read_fails_bs_ops_02_in_detect_and_check(
    open_session: Path, at: str
) -> None:
    """A submodule whose git directory is gone (its `.git` names a folder that is not there)
    cannot say what it tracks: BS-OPS-02 fails in detect and in check, never passes (found
    by a hunt)."""
    repo = open_session.parents[2]
    superproject = repo.parent
    holder = superproject if at == "repository" else repo
    _submodule_at(holder, repo if at == "repository" else open_session, track_ops=False)
    shutil.rmtree(holder / ".git" / "modules")
    assert _rule_everywhere(open_session, superproject, "BS-OPS-02") == ("fail", ["fail"])


def test_a_nested_clone_inside_the_session_folder_is_asked_what_it_tracks(
    open_session: Path,
) -> None:
    """A clone at the session's ops/ (not registered as a submodule) tracks the ops/ files
    in its own index: BS-OPS-02 fails in detect and in check (found by a hunt)."""
    repo = open_session.parents[2]
    make_git_repo(repo)
    make_git_repo(open_session / "ops", force_add=["capture.md"])
    assert _rule_everywhere(open_session, repo, "BS-OPS-02") == ("fail", ["fail"])


def test_a_session_folder_linked_from_elsewhere_in_the_repository_is_asked_what_git_tracks(
    open_session: Path,
) -> None:
    """A session folder that is a symbolic link to a folder elsewhere in its repository
    (`docs/research/demo-brainstorm -> ../../shared/demo`): git tracks its files under the
    link's target, and only those names were asked about, so a tracked ops/capture.md passed
    BS-OPS-02 in detect and in check (found by a hunt). Both fail it now."""
    repo = open_session.parents[2]
    shared = repo / "shared"
    shared.mkdir()
    open_session.rename(shared / "demo")
    open_session.symlink_to(Path("../../shared/demo"))
    make_git_repo(repo, force_add=["shared/demo/ops/capture.md"])
    assert _rule_everywhere(open_session, repo, "BS-OPS-02") == ("fail", ["fail"])


def test_detect_and_check_read_a_file_linked_from_elsewhere_in_the_repository(
    open_session: Path,
) -> None:
    """A session file that is a symbolic link to a file elsewhere in its repository is read
    by detect as by check (neither leaves the repository); a link out of it by neither."""
    repo = open_session.parents[2]
    shared = repo / "shared"
    shared.mkdir()
    (open_session / "forks.md").rename(shared / "forks.md")
    (open_session / "forks.md").symlink_to(shared / "forks.md")
    detected = json.loads(runner.invoke(app, ["detect", str(open_session), "--json"]).stdout)
    assert not [n for n in detected["notes"] if n["file"] == "forks.md"], detected
    out = open_session.parents[4] / "out"
    assert runner.invoke(app, ["crawl", str(repo), "--out", str(out)]).exit_code == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code == 0
    con = connect(Out(out))
    checked = dict(con.execute("SELECT rule_id, status FROM statuses").fetchall())
    assert {r["rule"]: r["status"] for r in detected["rules"]} == {
        r: checked[r] for r in (x["rule"] for x in detected["rules"])
    }
    assert checked["BS-FORK-01"] == "pass"


def test_a_file_linked_out_of_its_repository_fails_in_detect_and_in_a_crawl_above(
    open_session: Path,
) -> None:
    """A session file that is a symbolic link out of its repository to a folder beside it,
    crawled from the folder above both (found by a hunt): detect, bounded by the repository,
    refused it and failed BS-FORK-01, but the crawl, bounded by its root, read it and passed,
    so a folder's results hung on where the crawl began. A repository's files are its own:
    both refuse it now."""
    above = open_session.parents[3]
    (above / "shared").mkdir()
    (open_session / "forks.md").rename(above / "shared" / "forks.md")
    (open_session / "forks.md").symlink_to(above / "shared" / "forks.md")
    assert _rule_everywhere(open_session, above, "BS-FORK-01") == ("fail", ["fail"])


def test_a_document_linked_out_of_its_repository_fails_harvest_in_a_crawl_above(
    tmp_path: Path,
) -> None:
    """The same for a repository document at the move gate: `docs/notes.md` linking to a
    file beside the repository passed BS-HARVEST-01 in a crawl of the folder above (the
    document read) and failed it in detect (not read, its links unknown; found by a hunt)."""
    repo = copy_tree(BASE / "harvested" / "repo", tmp_path / "plain" / "repo")
    (tmp_path / "plain" / "shared").mkdir()
    (tmp_path / "plain" / "shared" / "notes.md").write_text("plain notes\n", encoding="utf-8")
    (repo / "docs" / "notes.md").symlink_to(Path("../../shared/notes.md"))
    session = repo / "docs" / "history" / "brainstorms" / "demo"
    result = runner.invoke(app, ["detect", str(session), "--gate", "move"])
    assert "BS-HARVEST-01 fail /docs/notes.md" in result.stdout, result.output
    out = tmp_path / "out"
    assert runner.invoke(app, ["crawl", str(tmp_path / "plain"), "--out", str(out)]).exit_code == 0
    assert runner.invoke(app, ["check", "--out", str(out)]).exit_code in (0, 1)
    con = connect(Out(out))
    query = "SELECT status FROM statuses WHERE rule_id = 'BS-HARVEST-01'"
    assert con.execute(query).fetchall() == [("fail",)]


def test_detect_reads_the_folder_a_path_climbing_out_of_a_link_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`link/../docs/research/x-brainstorm` names, for the OS, the session beside the link's
    target. The location was taken from the path with `..` removed as text, so the files were
    read from the session beside the link instead: clean, where the folder named fails
    (found by a hunt)."""
    here = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "here")
    there = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "there")
    forks = there / "docs" / "research" / "demo-brainstorm" / "forks.md"
    forks.write_text(forks.read_text().replace("- Closes when: a yes/no", "- Note: a yes/no"))
    (there / "sub").mkdir()
    (here / "link").symlink_to(there / "sub")
    monkeypatch.chdir(here)
    climbing = "link/../docs/research/demo-brainstorm"
    for path in (climbing, str(here / climbing)):
        result = runner.invoke(app, ["detect", path])
        assert result.exit_code == 1, (path, result.output)
        assert "BS-FORK-01 fail forks.md:" in result.stdout


def test_detect_violations_exit_1_with_file_and_line(open_session: Path) -> None:
    result = runner.invoke(app, ["detect", str(open_session), "--gate", "manifest"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines[-1] == "failing"
    assert any(line.startswith("BS-FORK-03 fail forks.md:") and "is open" in line for line in lines)


def test_detect_json_object_shape(open_session: Path) -> None:
    result = runner.invoke(app, ["detect", str(open_session), "--gate", "manifest", "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["gate"] == "manifest" and doc["result"] == "failing"
    rules = {r["rule"]: r for r in doc["rules"]}
    assert len(rules) == 16
    assert rules["BS-FORK-03"]["status"] == "fail"
    assert rules["BS-FORK-03"]["findings"][0]["file"] == "forks.md"
    assert isinstance(rules["BS-FORK-03"]["findings"][0]["line"], int)
    assert rules["BS-MANIFEST-01"] == {
        "rule": "BS-MANIFEST-01",
        "status": "skipped",
        "reason": "no manifest",
    }


def test_every_finding_has_a_message_when_ids_cannot_be_read(open_session: Path) -> None:
    """Entries whose ID could not be read still fail with a sentence, never a null."""
    forks = open_session / "forks.md"
    forks.write_text(
        forks.read_text()
        + "\n## F-5 — Misspelt [open]\n- Raised by: user\n- Closes when: x\n"
        + "\n## F 6 — Spaced [parked]\n- Raised by: user\n- Closes when: x\n"
    )
    ledger = open_session / "ledger.md"
    ledger.write_text(ledger.read_text() + "\n## d9 — Lower case\nReversed by D77\n")
    result = runner.invoke(app, ["detect", str(open_session), "--gate", "manifest", "--json"])
    findings = [
        (r["rule"], f) for r in json.loads(result.output)["rules"] for f in r.get("findings", [])
    ]
    assert {rule for rule, _ in findings} >= {"BS-FORK-01", "BS-FORK-03", "BS-LEDGER-01"}
    assert all(isinstance(f["message"], str) and f["message"] for _, f in findings), findings


def test_detect_unusable_input_exit_2(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["detect", str(tmp_path / "missing")])
    assert missing.exit_code == 2 and "no such directory" in missing.output
    (tmp_path / "file.md").write_text("x")
    not_dir = runner.invoke(app, ["detect", str(tmp_path / "file.md")])
    assert not_dir.exit_code == 2 and "not a directory" in not_dir.output
    empty = runner.invoke(app, ["detect", ""])
    assert empty.exit_code == 2 and "the session folder given is empty" in empty.stderr


def test_detect_names_an_unusable_folder_before_judging_its_sarif_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --sarif the folder's own fault was hidden: an empty SESSION_DIR (an unset
    variable) read as the current folder and a file as a folder, so any --sarif was said to
    lie "inside the session folder" (found by a hunt)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file.md").write_text("x")
    for folder, sarif, line in (
        ("", "r.sarif", "the session folder given is empty"),
        ("file.md", "file.md", "file.md: not a directory"),
        ("missing", "missing/r.sarif", "missing: no such directory"),
    ):
        result = runner.invoke(app, ["detect", folder, "--sarif", sarif])
        assert result.exit_code == 2 and line in result.stderr, (folder, result.stderr)
    assert (tmp_path / "file.md").read_text() == "x"


@pytest.mark.parametrize(
    "argv",
    [["detect", "missing"], ["crawl", "missing", "--out", "out"], ["check", "--out", "out"]],
)
def test_debug_adds_a_traceback_and_keeps_exit_2(argv: list[str], tmp_path: Path) -> None:
    argv = [str(tmp_path / a) if a in ("missing", "out") else a for a in argv]
    plain = runner.invoke(app, argv)
    debug = runner.invoke(app, ["--debug", *argv])
    assert plain.exit_code == 2 and "Traceback" not in plain.output
    # A scheduler run with --debug must still read "unusable input", not "violations found".
    assert debug.exit_code == 2, debug.output
    assert "Traceback" in debug.output
    assert debug.output.strip().splitlines()[-1] == plain.output.strip()


def test_detect_shows_what_its_walk_could_not_enter(open_session: Path, tmp_path: Path) -> None:
    """What the walk refuses (here a link that loops back to the session) is a note, as
    crawl makes it a parse issue: `clean` never hides a folder that was not read."""
    session = tmp_path / "docs" / "research" / "linked-brainstorm"
    shutil.copytree(open_session, session)
    (session / "loop").symlink_to(session, target_is_directory=True)
    result = runner.invoke(app, ["detect", str(session)])
    notes = [line for line in result.output.splitlines() if line.startswith("note loop")]
    assert "note loop symbolic link loops back to an enclosing folder; not followed" in notes


def test_detect_empty_folder_still_prints_and_fails(tmp_path: Path) -> None:
    empty = tmp_path / "docs" / "research" / "empty-brainstorm"
    empty.mkdir(parents=True)
    result = runner.invoke(app, ["detect", str(empty)])
    assert result.exit_code == 1
    assert "BS-STATE-01 fail state.md" in result.output
    assert result.output.strip().endswith("failing")


def test_sql_refuses_an_output_inside_out(crawled: Path) -> None:
    """census sql only reads OUT: an --output over a committed table file damaged it silently
    (the next query counted zero sessions)."""
    committed = next((crawled / "tables" / "observations").rglob("*.parquet"))
    before = committed.read_bytes()
    for target in (committed, crawled / "manifest.json", crawled / "result.csv"):
        done = runner.invoke(
            app, ["sql", "SELECT 1", "--out", str(crawled), "-f", "csv", "--output", str(target)]
        )
        assert done.exit_code == 2 and "lies inside OUT" in done.output, done.output
    assert committed.read_bytes() == before and not (crawled / "result.csv").exists()


def test_no_output_option_writes_over_outs_own_data(crawled: Path, tmp_path: Path) -> None:
    """`check --sarif OUT/manifest.json` was accepted: OUT then read as empty with exit 0, and
    the next check swept away every table file; `report --html` could overwrite a table file
    (found by a hunt). A report or SARIF file beside OUT's data stays the user's choice."""
    runner.invoke(app, ["crawl", str(tmp_path / "corpus"), "--out", str(crawled), "-l", "run=two"])
    assert runner.invoke(app, ["check", "--out", str(crawled)]).exit_code == 0
    committed = next((crawled / "tables" / "observations").rglob("*.parquet"))
    own = [crawled / "manifest.json", committed, crawled / "census.duckdb", crawled / "state" / "x"]
    before = {p: p.read_bytes() for p in own if p.exists()}
    commands = (
        ["check", "--out", str(crawled), "--sarif"],
        ["report", "--out", str(crawled), "--html"],
        [
            "compare",
            "--out",
            str(crawled),
            "--baseline",
            "run=one",
            "--candidate",
            "run=two",
            "--sarif",
        ],
    )
    for command in commands:
        for target in own:
            done = runner.invoke(app, [*command, str(target)])
            assert done.exit_code == 2, (command, target, done.output)
            assert done.stderr.splitlines() == [
                f"census: {command[-1]} {target} would write over OUT's own data; "
                f"give a path outside {crawled}"
            ]
    assert {p: p.read_bytes() for p in own if p.exists()} == before
    for name, command in zip(("a.sarif", "r.html", "c.sarif"), commands, strict=True):
        done = runner.invoke(app, [*command, str(crawled / name)])
        assert done.exit_code in (0, 1) and (crawled / name).is_file(), done.output


@pytest.mark.parametrize(
    "body",
    [
        *("{}", "[]", '{"version": "2.1.0", "runs": []}'),
        # A map of files that lists no run, or names a file by a number (found by a hunt: the
        # next crawl swept every committed file away, checked points too).
        *('{"format": 2, "files": {}}', '{"format": 2, "files": {"runs": [1]}}'),
        '{"format": 2, "files": {"runs": "runs/x.parquet"}}',
    ],
)
def test_a_manifest_that_is_not_one_is_damage_not_an_empty_out(
    crawled: Path, corpus: Path, body: str
) -> None:
    """A manifest.json without its list of files read as an OUT with no files: `sql` counted
    zero sessions with exit 0, and the next writer deleted every table file as superseded."""
    (crawled / "manifest.json").write_text(body)
    files = sorted((crawled / "tables").rglob("*.parquet"))
    for command in (["sql", "SELECT count(*) FROM sessions"], ["check"], ["crawl", str(corpus)]):
        done = runner.invoke(app, [*command, "--out", str(crawled)])
        assert done.exit_code == 2, (command, done.output)
        assert "is not a census manifest; OUT is damaged" in done.stderr, done.stderr
    assert sorted((crawled / "tables").rglob("*.parquet")) == files


def test_an_out_written_by_a_newer_census_is_refused_untouched(crawled: Path, corpus: Path) -> None:
    """manifest.json's format was written and never read: a newer census's OUT was read as
    this one's, and this one's next commit dropped every table it has no name for (found by
    a hunt)."""
    manifest = crawled / "manifest.json"
    body = json.loads(manifest.read_text())
    body["format"] += 1
    body["files"]["tables_of_the_future"] = ["tables_of_the_future/x.parquet"]
    manifest.write_text(json.dumps(body))
    before = manifest.read_bytes()
    for command in (["sql", "SELECT count(*) FROM sessions"], ["check"], ["crawl", str(corpus)]):
        done = runner.invoke(app, [*command, "--out", str(crawled)])
        assert done.exit_code == 2, (command, done.output)
        assert done.stderr.startswith("census: OUT was written by a newer census"), done.stderr
        assert len(done.stderr.splitlines()) == 1, done.stderr
    assert manifest.read_bytes() == before


def test_previous_with_one_checked_point_says_checked(crawled: Path, corpus: Path) -> None:
    """Two points, one checked: 'OUT holds one' read as wrong; it holds one checked point."""
    assert runner.invoke(app, ["check", "--out", str(crawled)]).exit_code == 0
    assert runner.invoke(app, ["crawl", str(corpus), "--out", str(crawled)]).exit_code == 0
    done = runner.invoke(app, ["stats", "--out", str(crawled), "--run", "previous"])
    assert done.exit_code == 2
    assert "there is no previous census point: OUT holds one checked" in done.output


def test_sql_formats(crawled: Path, tmp_path: Path) -> None:
    query = "SELECT stage, count(*) AS n FROM snapshots GROUP BY stage ORDER BY stage"
    table = runner.invoke(app, ["sql", query, "--out", str(crawled)])
    assert table.exit_code == 0 and "harvested" in table.output
    csv = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "csv"])
    assert csv.output.splitlines()[0] == "stage,n"
    as_json = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "json"])
    assert {"stage": "open", "n": 1} in json.loads(as_json.output)
    parquet = tmp_path / "x.parquet"
    done = runner.invoke(
        app, ["sql", query, "--out", str(crawled), "-f", "parquet", "--output", str(parquet)]
    )
    assert done.exit_code == 0 and parquet.stat().st_size > 0


def test_sql_table_in_a_file_or_a_pipe_holds_every_row_whole(crawled: Path, tmp_path: Path) -> None:
    """The default format kept DuckDB's terminal preview in a file or a pipe: 20 of 520
    findings, long values cut with '…', so a script grepping the output lost the rest (found
    by a hunt)."""
    query = "SELECT range AS i, repeat('x', 300) AS s FROM range(100)"
    piped = runner.invoke(app, ["sql", query, "--out", str(crawled)])
    target = tmp_path / "t.txt"
    written = runner.invoke(app, ["sql", query, "--out", str(crawled), "--output", str(target)])
    assert piped.exit_code == written.exit_code == 0, piped.output + written.output
    for text in (piped.stdout, target.read_text()):
        rows = [line for line in text.splitlines() if line.startswith("│ ") and "x" * 300 in line]
        assert len(rows) == 100 and "…" not in text and "shown" not in text, text[-300:]


def test_sql_table_in_a_pipe_holds_more_rows_than_duckdb_draws_at_once(
    crawled: Path, tmp_path: Path
) -> None:
    """DuckDB's table renderer reads at most 10,000 rows: a longer result in a pipe or an
    --output file stopped there, under a footer '? rows', exit 0 (found by a hunt). Every row
    is there now, once, in the query's order."""
    query = "SELECT range AS i FROM range(12345) ORDER BY i DESC"
    piped = runner.invoke(app, ["sql", query, "--out", str(crawled)])
    target = tmp_path / "t.txt"
    written = runner.invoke(app, ["sql", query, "--out", str(crawled), "--output", str(target)])
    assert piped.exit_code == written.exit_code == 0, piped.output + written.output
    for text in (piped.stdout, target.read_text()):
        cells = [line.strip("│ ") for line in text.splitlines() if line.startswith("│ ")]
        rows = [int(cell) for cell in cells if cell.isdigit()]
        assert rows == list(range(12344, -1, -1)) and "? rows" not in text, text[-300:]


def test_sql_table_in_a_pipe_keeps_the_query_s_column_names(crawled: Path) -> None:
    """The result held as a table to be drawn in pages renamed columns named alike (a join's
    two snapshot_id, or Id and id) to snapshot_id_1 and id_1 in a pipe or an --output file,
    where the terminal, CSV and the query said snapshot_id and id (found by a hunt)."""
    query = (
        "SELECT r.snapshot_id, o.snapshot_id, 1 AS Id, 2 AS id FROM rule_results r "
        "JOIN observations o ON r.snapshot_id = o.snapshot_id LIMIT 1"
    )
    piped = runner.invoke(app, ["sql", query, "--out", str(crawled)])
    assert piped.exit_code == 0, piped.output
    header = [cell.strip() for cell in piped.stdout.splitlines()[1].strip("│").split("│")]
    assert header == ["snapshot_id", "snapshot_id", "Id", "id"], piped.stdout


def test_sql_json_refuses_two_columns_of_one_name(crawled: Path) -> None:
    """`SELECT 1 AS a, 2 AS a` printed [{"a": 2}] with exit 0: a join selecting s.topic and
    p.topic lost one of them (found by a hunt). CSV keeps both; JSON says so, exit 2."""
    query = "SELECT 1 AS a, 2 AS a"
    done = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "json"])
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("census: --format json: the result has more than one column")
    csv = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "csv"])
    assert csv.exit_code == 0 and csv.output.splitlines() == ["a,a", "1,2"]


def test_sql_csv_with_a_list_column_keeps_each_column_named_alike(crawled: Path) -> None:
    """With a list, map or struct column in the result, CSV showed a second column named like
    an earlier one (a join's two `line`, or Id and id) with the first one's values, exit 0:
    `SELECT 1 AS x, 2 AS X, [3] AS l` printed 1,1,[3] (found by a hunt)."""
    query = "SELECT 1 AS x, 2 AS X, 3 AS x, [4] AS l, {'k': 5} AS s"
    csv = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "csv"])
    assert csv.exit_code == 0, csv.output
    assert csv.output.splitlines() == ["x,X,x,l,s", "1,2,3,[4],{'k': 5}"], csv.output


def test_sql_csv_spells_a_fixed_size_array_as_duckdb_does(crawled: Path) -> None:
    """A fixed-size ARRAY (`TIMESTAMPTZ[2]`) went into CSV as Python's tuple repr,
    `(datetime.datetime(2026, 1, 1, …), None)`, where a list reads `[…]` (found by a hunt)."""
    query = "SELECT [TIMESTAMPTZ '2026-01-01 00:00:00+00', NULL]::TIMESTAMPTZ[2] AS a"
    csv = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "csv"])
    assert csv.exit_code == 0, csv.output
    assert csv.output.splitlines() == ["a", "\"['2026-01-01 00:00:00+00', NULL]\""], csv.output


def test_sql_csv_into_a_pipe_keeps_every_character_of_a_value(crawled: Path) -> None:
    """CSV written to a pipe or a file is data: an escape sequence in a value (a hostile fork
    title `Evil\\x1b[2J title`) came out `Evil title`, silently changed, while JSON kept
    `\\u001b` (found by a hunt). Only a terminal is spared raw control characters."""
    query = "SELECT 'Evil' || chr(27) || '[2J title' AS t"
    csv = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "csv"])
    assert csv.exit_code == 0, csv.output
    assert csv.output.splitlines() == ["t", "Evil\x1b[2J title"], csv.output


def test_sql_error_is_one_line_exit_2(crawled: Path) -> None:
    result = runner.invoke(app, ["sql", "SELECT nope FROM snapshots", "--out", str(crawled)])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1
    assert "nope" in result.output


@pytest.mark.parametrize("query", ["", "  ;  ", "-- only a comment", "/* nothing */"])
def test_an_empty_sql_query_is_a_usage_error(crawled: Path, query: str) -> None:
    result = runner.invoke(app, ["sql", query, "--out", str(crawled)])
    assert result.exit_code == 2, result.output
    assert "the query is empty" in result.stderr and len(result.stderr.splitlines()) == 1


def test_sql_refuses_two_queries_rather_than_drop_the_first(crawled: Path) -> None:
    """`SELECT …; SELECT …` showed the second result alone, exit 0: the first was dropped
    without a word. Statements that set up may still come before the query."""
    two = runner.invoke(app, ["sql", "SELECT 1 AS a; SELECT 2 AS b", "--out", str(crawled)])
    assert two.exit_code == 2, two.output
    assert "statement 1 of 2 (SELECT 1 AS a;) returns rows" in two.stderr
    assert len(two.stderr.splitlines()) == 1
    setup = "CREATE TEMP MACRO m() AS 41; SELECT m() + 1 AS x;"
    ok = runner.invoke(app, ["sql", setup, "--out", str(crawled), "--format", "csv"])
    assert ok.exit_code == 0 and ok.stdout.splitlines() == ["x", "42"], ok.output
    # The README's other set-up forms; a setting of DuckDB's own is locked in the sandbox.
    setup = "SET VARIABLE n = 41; SET search_path = 'main'; SELECT getvariable('n') + 1 AS x"
    ok = runner.invoke(app, ["sql", setup, "--out", str(crawled), "--format", "csv"])
    assert ok.exit_code == 0 and ok.stdout.splitlines() == ["x", "42"], ok.output
    locked = runner.invoke(app, ["sql", "SET TimeZone = 'EST'; SELECT 1", "--out", str(crawled)])
    assert locked.exit_code == 2 and "the configuration has been locked" in locked.stderr


def test_sql_help_lists_the_tables_and_views() -> None:
    result = runner.invoke(app, ["sql", "--help"])
    for name in ("snapshots", "rule_results", "rule_rates", "fork_lifetimes", "sync_pairs"):
        assert f"{name}:" in result.output, name


def test_every_command_has_help() -> None:
    for command in ("run", "crawl", "check", "detect", "sql"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "Example:" in result.output, command


def test_a_negative_count_of_worst_sessions_is_a_usage_error(crawled: Path) -> None:
    assert runner.invoke(app, ["check", "--out", str(crawled)]).exit_code == 0
    result = runner.invoke(app, ["report", "--out", str(crawled), "--worst", "-1"])
    assert result.exit_code == 2 and "'--worst'" in result.output, result.output


def test_more_worst_sessions_than_sql_can_count_lists_them_all(
    crawled: Path, tmp_path: Path
) -> None:
    """`--worst 10**23` (every session, whatever their number) was an internal error: DuckDB's
    LIMIT takes no number past a BIGINT (found by a hunt)."""
    assert runner.invoke(app, ["check", "--out", str(crawled)]).exit_code == 0
    html = tmp_path / "all.html"
    args = ["report", "--out", str(crawled), "--worst", str(10**23), "--html", str(html)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and html.is_file(), result.output


@pytest.mark.parametrize("second", ["same", "inside", "outside"])
def test_overlapping_roots_are_a_usage_error(corpus: Path, tmp_path: Path, second: str) -> None:
    """A session seen under two roots would count twice in the run's rates."""
    other = {"same": corpus, "inside": corpus / "team-open", "outside": corpus.parent}[second]
    result = runner.invoke(app, ["crawl", str(other), str(corpus), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "give each root once" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_an_archive_given_twice_is_named_a_file(tmp_path: Path) -> None:
    """The same archive twice (once through a link) was "the same folder as" itself (found by
    a hunt): an archive root is a file."""
    import tarfile

    archive = tmp_path / "corpus.tar"
    with tarfile.open(archive, "w"):
        pass
    (tmp_path / "again.tar").symlink_to(archive)
    args = ["crawl", str(archive), str(tmp_path / "again.tar"), "--out", str(tmp_path / "o")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "is the same file as" in result.output and "give each root once" in result.output


@pytest.mark.parametrize("second", ["inside", "outside"])
def test_a_root_nesting_with_another_run_s_root_of_the_point_is_a_usage_error(
    corpus: Path, tmp_path: Path, second: str
) -> None:
    """Two runs of one census point whose roots nest saw each session under both: before, the
    second crawl was taken and the point counted every such session twice in its rates (each
    per root), although the same roots in one crawl are refused (found by a hunt). The same
    root again (a rerun) and a new point still crawl."""
    out = str(tmp_path / "o")
    first, other = {
        "inside": (corpus, corpus / "team-open"),
        "outside": (corpus / "team-open", corpus),
    }[second]
    night = ["--out", out, "--point", "night-1", "--workers", "1"]
    assert runner.invoke(app, ["crawl", str(first), *night]).exit_code == 0
    result = runner.invoke(app, ["crawl", str(other), *night])
    assert result.exit_code == 2 and "would count twice" in result.output, result.output
    assert runner.invoke(app, ["crawl", str(first), *night]).exit_code == 0
    assert runner.invoke(app, ["check", "--out", out]).exit_code == 0
    con = connect(Out(Path(out)))
    counted = "SELECT count(*), count(DISTINCT session_key) FROM point_sessions"
    rows, sessions = con.execute(counted).fetchone()
    assert rows == sessions == (4 if first == corpus else 1), (rows, sessions)
    later = ["--out", out, "--point", "night-2", "--workers", "1"]
    assert runner.invoke(app, ["crawl", str(other), *later]).exit_code == 0


@pytest.mark.parametrize(
    "where",
    [
        "team-harvested/docs/architecture",  # a destination document linking into the session
        "team-harvested/docs",  # the sessions themselves
        "team-open/docs/research/demo-brainstorm/fragments/out",  # a session's own folder
    ],
)
def test_an_out_that_would_hide_part_of_the_root_is_refused(corpus: Path, where: str) -> None:
    """The crawl leaves an OUT inside its root out of the walk, and it left out the whole
    folder: an OUT at docs/architecture hid a document linking into a harvested session (the
    crawl said clean where detect fails BS-HARVEST-01), one at docs/ hid every session without
    a word, one in a session's fragments/ made crawl and detect read the session differently
    (found by a hunt)."""
    doc = corpus / "team-harvested" / "docs" / "architecture" / "overview.md"
    doc.write_text(doc.read_text() + "\nSee [notes](../history/brainstorms/demo/state.md).\n")
    session = corpus / "team-harvested" / "docs" / "history" / "brainstorms" / "demo"
    detected = runner.invoke(app, ["detect", str(session), "--gate", "move"])
    assert "BS-HARVEST-01 fail" in detected.output, detected.output
    out = corpus / where
    result = runner.invoke(app, ["run", str(corpus), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2 and "give --out a folder" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not (out / "manifest.json").exists()


LATIN1 = "caf\udce9"  # b"caf\xe9" as Python gives a command line or a folder name not UTF-8


@pytest.mark.parametrize(
    "case",
    ["root", "root-link", "out", "out-link", "label", "point", "run", "query", "file", "stdin"],
)
def test_text_that_is_not_utf8_is_a_usage_error_not_an_internal_one(
    crawled: Path, corpus: Path, tmp_path: Path, case: str
) -> None:
    """A root, --out, --label, --point, --run or sql query in bytes that are not UTF-8 (a
    Latin-1 folder name, a query file saved as Latin-1) ended in `census: internal error: …`
    (a UnicodeEncodeError, DuckDB's "Python Conversion Failure", a TypeError): the bug line,
    where a usage error names what to fix (found by a hunt)."""
    odd = tmp_path / f"repo-{LATIN1}"
    shutil.copytree(corpus / "team-open", odd)
    (tmp_path / "q.sql").write_bytes(b"SELECT 'caf\xe9'")
    (tmp_path / "root-link").symlink_to(odd)
    (tmp_path / f"out-{LATIN1}").mkdir()
    (tmp_path / "out-link").symlink_to(tmp_path / f"out-{LATIN1}")
    out, new = str(crawled), str(tmp_path / "new-out")
    argv = {
        "root": ["crawl", str(odd), "--out", new],
        "root-link": ["crawl", str(tmp_path / "root-link"), "--out", new],
        "out": ["crawl", str(corpus), "--out", f"{new}-{LATIN1}"],
        "out-link": ["crawl", str(corpus), "--out", str(tmp_path / "out-link" / "x")],
        "label": ["crawl", str(corpus), "--out", new, "--label", f"team={LATIN1}"],
        "point": ["crawl", str(corpus), "--out", new, "--point", LATIN1],
        "run": ["stats", "--out", out, "--run", LATIN1],
        "query": ["sql", f"SELECT '{LATIN1}'", "--out", out],
        "file": ["sql", "--file", str(tmp_path / "q.sql"), "--out", out],
        "stdin": ["sql", "-", "--out", out],
    }[case]
    result = runner.invoke(app, argv, input=b"SELECT 'caf\xe9'")
    assert result.exit_code == 2 and "not UTF-8 text" in result.output, result.output
    assert "internal error" not in result.output and not Path(new).exists(), result.output


@pytest.mark.parametrize("where", ["kept/.old", "team-new"])
def test_an_out_holding_sessions_under_a_dot_folder_or_its_own_docs_is_refused(
    corpus: Path, tmp_path: Path, where: str
) -> None:
    """An OUT whose entries started with '.' counted them as OUT's own (its lock files), and
    a `docs/` was looked for only below an entry: an OUT holding a repository under `.old/`,
    or an OUT that is a repository folder whose session has no Markdown yet, was taken, and
    the crawl read 0 sessions, saying only that there was no session folder (found by a
    hunt). The crawl reads both sessions when OUT is elsewhere."""
    out = corpus / where.split("/")[0]
    if where == "team-new":
        ops = out / "docs" / "research" / "new-brainstorm" / "ops"
        ops.mkdir(parents=True)
        (ops / ".gitignore").write_text("*\n")
    else:
        (corpus / where).mkdir(parents=True)
        (corpus / "team-open").rename(corpus / where / "team-open")
    elsewhere = runner.invoke(app, ["crawl", str(corpus), "--out", str(tmp_path / "out")])
    sessions = "5 sessions" if where == "team-new" else "4 sessions"
    assert elsewhere.exit_code == 0 and sessions in elsewhere.output, elsewhere.output
    result = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2 and "give --out a folder" in result.output, result.output
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize(
    ("layout", "made"),
    [("research", "new-brainstorm/ops/.gitignore"), ("history/brainstorms", "old-topic/a.png")],
)
def test_an_out_holding_a_session_folder_without_markdown_is_refused(
    corpus: Path, tmp_path: Path, layout: str, made: str
) -> None:
    """An OUT at a repository's docs/research/ (or docs/history/brainstorms/) holding a session
    folder with no Markdown yet (a session just started: ops/.gitignore alone) was taken: OUT
    was searched for Markdown and docs/ folders only, never for folders that are sessions by
    their path, so the crawl hid a session `census detect` fails (found by a hunt)."""
    out = corpus / "team-new" / "docs" / layout
    (out / made).parent.mkdir(parents=True)
    (out / made).write_text("*\n")
    elsewhere = runner.invoke(app, ["crawl", str(corpus), "--out", str(tmp_path / "out")])
    assert elsewhere.exit_code == 0 and "5 sessions" in elsewhere.output, elsewhere.output
    result = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2 and "give --out a folder" in result.output, result.output
    assert made.split("/")[0] in result.output and not (out / "manifest.json").exists()


@pytest.mark.parametrize("topic", ["staging", "state", "tables"])
def test_an_out_holding_a_session_named_like_its_own_folders_is_refused(
    corpus: Path, topic: str
) -> None:
    """An OUT at docs/history/brainstorms/ beside a harvested session whose topic is one of
    OUT's own folder names was taken: the folder was skipped as OUT's own before OUT held a
    run, so the crawl hid the session, wrote into it, and its sweep deleted `staging/` from
    the root (found by a hunt)."""
    out = corpus / "team-new" / "docs" / "history" / "brainstorms"
    session = out / topic
    copy_tree(HARVESTED_DEMO, session)
    before = sorted(p.relative_to(session) for p in session.rglob("*"))
    result = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2 and "give --out a folder" in result.output, result.output
    assert repr(topic) in result.output and not (out / "manifest.json").exists()
    assert sorted(p.relative_to(session) for p in session.rglob("*")) == before


def test_an_out_whose_own_folder_holds_markdown_is_refused(corpus: Path, tmp_path: Path) -> None:
    """Once OUT holds runs its own folders are its own, yet census writes no Markdown there:
    a session moved into OUT's staging/ later is still refused, not swept away."""
    out = corpus / "team-new" / "docs" / "history" / "brainstorms"
    first = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
    assert first.exit_code == 0, first.output
    copy_tree(HARVESTED_DEMO, out / "staging")
    again = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
    assert again.exit_code == 2 and "'staging'" in again.output, again.output
    assert (out / "staging" / "forks.md").is_file()


@pytest.mark.parametrize("name", ["staging", "state", "tables"])
def test_a_folder_with_a_folder_of_outs_own_name_is_no_new_out(
    corpus: Path, tmp_path: Path, name: str
) -> None:
    """A folder that holds no census run yet but a folder named like one of OUT's own was
    taken as OUT: the crawl wrote into the user's folder, and its sweep deleted staging/ and
    all it held (found by a hunt). A folder a killed first crawl left (its lock beside it)
    is OUT's own."""
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)
    (out / name / "notes.txt").write_text("precious\n")
    refused = runner.invoke(app, ["crawl", str(corpus), "--out", str(out)])
    assert refused.exit_code == 2 and f"folder {name!r}" in refused.output, refused.output
    assert (out / name / "notes.txt").read_text() == "precious\n"
    assert not (out / "manifest.json").exists()
    (out / ".lock").touch()
    taken = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
    assert taken.exit_code == 0, taken.output


def test_an_out_that_is_a_root_itself_is_refused(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`census crawl . --out .` wrote census.duckdb, manifest.json, state/ and tables/ among
    the crawled repositories, exit 0, and every later crawl walked them: an OUT inside a root
    is left out only below it. Refused in one line, exit 2; the default OUT still works."""
    monkeypatch.chdir(corpus)
    before = sorted(p.name for p in corpus.iterdir())
    refused = runner.invoke(app, ["crawl", ".", "--out", "."])
    assert refused.exit_code == 2, refused.output
    assert "is root '.' itself" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert sorted(p.name for p in corpus.iterdir()) == before
    taken = runner.invoke(app, ["crawl", ".", "--workers", "1"])
    assert taken.exit_code == 0, taken.output


def test_an_out_holding_a_looping_link_beside_a_session_is_refused(corpus: Path) -> None:
    """An OUT inside the root holding a session folder and a link that leads to itself: asking
    the link whether it is a folder raised, and the check for what OUT hides gave up as if OUT
    held nothing, so the crawl took OUT and left the session in it unread (found by a hunt)."""
    out = corpus / "team-new" / "docs" / "history" / "brainstorms"
    copy_tree(HARVESTED_DEMO, out / "hidden")
    (out / "a-loop").symlink_to("a-loop")
    result = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2 and "'hidden'" in result.output, result.output
    assert not (out / "manifest.json").exists()


def test_an_out_kept_in_git_inside_the_root_is_taken(corpus: Path) -> None:
    """OUT's own files and a `.git` of its own hide nothing the crawl reads: the nightly
    crawl into such an OUT, run from the repository, keeps working."""
    out = corpus / "census-out"
    (out / ".git").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for _ in range(2):
        result = runner.invoke(app, ["crawl", str(corpus), "--out", str(out), "--workers", "1"])
        assert result.exit_code == 0 and "4 sessions" in result.output, result.output


def test_an_out_given_as_a_link_out_of_the_root_is_no_parse_issue(
    corpus: Path, tmp_path: Path
) -> None:
    """`census crawl . --out census-out` where census-out is a link to a larger disk noted,
    every night, a root issue "symbolic link leads out of the root" about OUT's own link
    (found by a hunt). Another folder link out of the root is still noted."""
    disk = tmp_path / "disk"
    disk.mkdir()
    (corpus / "census-out").symlink_to(disk)
    out = str(corpus / "census-out")
    for _ in range(2):
        result = runner.invoke(app, ["crawl", str(corpus), "--out", out, "--workers", "1"])
        assert result.exit_code == 0 and " 0 parse issues" in result.output, result.output
    (corpus / "elsewhere").symlink_to(tmp_path)
    result = runner.invoke(app, ["crawl", str(corpus), "--out", out, "--workers", "1"])
    assert result.exit_code == 0 and " 1 parse issues" in result.output, result.output


def test_fail_above_reads_the_rates_shown_at_the_gate_asked_for(crawled: Path) -> None:
    """Every session at the move gate fails CENSUS-MOVE-01 2/3; at their own gates, none."""
    own = runner.invoke(app, ["check", "--out", str(crawled), "--fail-above", "0.5"])
    assert own.exit_code == 0, own.output
    at_move = ["check", "--out", str(crawled), "--gate", "move", "--fail-above", "0.5"]
    moved = runner.invoke(app, at_move)
    assert moved.exit_code == 1, moved.output
    assert "CENSUS-MOVE-01" in moved.stderr and "every session at the move gate" in moved.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--point", ""],
        ["--point", "latest"],
        ["--point", "previous"],
        ["--point", "20261202T175737.495495Z-d78884"],  # `--run ID` reads it as a run's id
        ["-l", "run=a", "-l", "run=b"],
        # Chosen, but each alarm naming it split over two lines or cleared the terminal.
        ["--point", "night\n2"],
        ["--point", "night\x1b[2J"],
    ],
    ids=["empty-point", "latest", "previous", "run-id", "label-twice", "newline", "escape"],
)
def test_names_a_selector_could_never_choose_are_refused(
    corpus: Path, tmp_path: Path, args: list[str]
) -> None:
    result = runner.invoke(app, ["crawl", str(corpus), "--out", str(tmp_path / "o"), *args])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output


def test_a_night_missing_a_shard_is_not_frozen(corpus: Path, tmp_path: Path) -> None:
    """Freezing it would lose the missing shard's sessions for good (a late shard is refused)."""
    out = str(tmp_path / "o")

    def shard(k: str) -> None:
        args = ["crawl", str(corpus), "--out", out, "--point", "d9", "--shard", k]
        assert runner.invoke(app, args).exit_code == 0

    shard("2/2")
    partial = runner.invoke(app, ["check", "--out", out])
    assert partial.exit_code == 2 and "holds shards 2/2 only" in partial.output, partial.output
    shard("1/2")
    whole = runner.invoke(app, ["check", "--out", out])
    assert whole.exit_code == 0, whole.output


def test_the_command_list_reads_each_summary_as_one_paragraph() -> None:
    """`census --help` lists each command by its docstring's first paragraph, reflowed: a
    docstring's own line breaks do not cut a sentence mid-line."""
    from typer.main import get_command

    result = runner.invoke(app, ["--help"], terminal_width=400, env={"COLUMNS": "400"})
    assert result.exit_code == 0
    listed = result.output
    for name, command in get_command(app).commands.items():  # type: ignore[attr-defined]
        summary = " ".join((command.help or "").split("\n\n")[0].split())
        line = next(line for line in listed.splitlines() if f"│ {name} " in line)
        assert summary in line, (name, line)


def test_a_sarif_path_that_can_never_be_written_is_refused_before_the_check(
    crawled: Path, tmp_path: Path
) -> None:
    """Refused in one line, exit 2, before anything is committed: the point stays unchecked."""
    missing = tmp_path / "no-such-folder" / "census.sarif"
    for path, line in (
        (missing, f"census: --sarif {missing}: the folder {missing.parent} does not exist\n"),
        (
            tmp_path,
            f"census: --sarif {tmp_path} is a directory; give a file path, such as "
            f"{tmp_path / 'census.sarif'}\n",
        ),
    ):
        result = runner.invoke(app, ["check", "--out", str(crawled), "--sarif", str(path)])
        assert (result.exit_code, result.stderr) == (2, line)
    unchecked = connect(Out(crawled)).execute("SELECT bool_or(checked) FROM points").fetchone()
    assert unchecked == (False,)


def test_a_sarif_write_failing_after_the_commit_warns_and_keeps_the_alarm(
    tmp_path: Path, small_disk: Path
) -> None:
    """The SARIF file is on a full disk: the check is committed, so the command exits as its
    alarms say (the example corpus fails rules), with a warning, and leaves no half file."""
    out = str(tmp_path / "out")
    roots = sorted(str(p) for p in (FIXTURES / "example").iterdir() if p.name != "README.md")
    assert runner.invoke(app, ["crawl", *roots, "--out", out]).exit_code == 0
    sarif = small_disk / "census.sarif"
    fill(small_disk)
    result = runner.invoke(app, ["check", "--out", out, "--sarif", str(sarif), "--fail-above", "0"])
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"census: warning: the check is committed, but {sarif} could not be written (no space "
        f"left on the device holding {sarif})"
    ), lines
    assert any(line.startswith("census: BS-") for line in lines[1:]), lines
    assert "SARIF →" not in result.stdout
    assert [p.name for p in small_disk.iterdir()] == ["filler"]


def test_detect_on_a_linked_session_folder_reads_the_repositorys_documents(
    tmp_path: Path,
) -> None:
    """A harvested session folder that is a link to a folder elsewhere: the repository's walk
    does not follow it, so the repository had no session, hence no documents, and a README
    linking into the folder passed BS-HARVEST-01. The same folder copied in place fails."""
    source = FIXTURES / "example" / "acme-checkout" / "docs" / "history" / "brainstorms"
    elsewhere = copy_tree(source / "address-validation", tmp_path / "elsewhere" / "address")
    repo = tmp_path / "repo"
    (repo / "docs" / "history" / "brainstorms").mkdir(parents=True)
    link = repo / "docs" / "history" / "brainstorms" / "address-validation"
    link.symlink_to(elsewhere)
    (repo / "README.md").write_text(
        "# R\n[x](docs/history/brainstorms/address-validation/thesis.md)\n"
    )
    result = runner.invoke(app, ["detect", str(link), "--gate", "move"])
    assert result.exit_code == 1, result.output
    assert "BS-HARVEST-01 fail /README.md:2" in result.stdout


@pytest.mark.parametrize("linked", ["docs", "docs/history"])
def test_detect_under_a_linked_docs_folder_reads_the_repositorys_documents(
    tmp_path: Path, linked: str
) -> None:
    """A repository whose `docs/` (or `docs/history/`) is a link to a folder beside it: detect
    reads the harvested session through the link, but the repository's walk looked for
    repository roots first, found none (their layout folder is a link), and read no document,
    so a README linking into the folder passed BS-HARVEST-01, clean where the same repository
    without the link fails (found by a hunt)."""
    source = FIXTURES / "example" / "acme-checkout" / "docs" / "history" / "brainstorms"
    repo = tmp_path / "repo"
    real = repo / f"real-{linked.replace('/', '-')}"
    inside = "history/brainstorms" if linked == "docs" else "brainstorms"
    copy_tree(source / "address-validation", real / inside / "address-validation")
    (repo / linked).parent.mkdir(parents=True, exist_ok=True)
    (repo / linked).symlink_to(os.path.relpath(real, (repo / linked).parent))
    (repo / "README.md").write_text(
        "# R\n[x](docs/history/brainstorms/address-validation/thesis.md)\n"
    )
    folder = repo / "docs" / "history" / "brainstorms" / "address-validation"
    result = runner.invoke(app, ["detect", str(folder), "--gate", "move"])
    assert result.exit_code == 1, result.output
    assert "BS-HARVEST-01 fail /README.md:2" in result.stdout


@pytest.mark.parametrize(
    ("on_disk", "in_link"),
    [("NFD", "NFC"), ("NFC", "NFD"), ("NFD", "mixed")],
)
def test_a_link_into_a_harvested_folder_is_seen_whatever_its_unicode_form(
    tmp_path: Path, on_disk: str, in_link: str
) -> None:
    """A harvested folder named `café-crème` in one Unicode form and a README linking into it
    in another (macOS writes names decomposed, an editor types them composed; the disks people
    share repositories on open either as the other): the link leads into the folder, yet
    BS-HARVEST-01 passed and detect said `clean` (found by a hunt)."""
    name = "caf\u00e9-cr\u00e8me"
    # Mixed: one letter composed, the other not.
    typed = "caf\u00e9-cre\u0300me" if in_link == "mixed" else unicodedata.normalize(in_link, name)
    repo = copy_tree(BASE / "harvested" / "repo", tmp_path / "root" / "repo")
    history = repo / "docs" / "history" / "brainstorms"
    folder = history / unicodedata.normalize(on_disk, name)
    (history / "demo").rename(folder)
    with (repo / "README.md").open("a", encoding="utf-8") as readme:
        readme.write(f"\nSee [it](docs/history/brainstorms/{typed}/thesis.md).\n")
    _harvest_fails_on_the_readme_link(repo, folder, tmp_path)


@pytest.mark.parametrize(
    "typed",
    ["docs/history/brainstorms/Demo/thesis.md", "DOCS/History/Brainstorms/demo/thesis.md"],
)
def test_a_link_into_a_harvested_folder_is_seen_whatever_its_case(
    tmp_path: Path, typed: str
) -> None:
    """A README linking `docs/history/brainstorms/Demo/thesis.md` into the folder `demo`: the
    disk a harvest is usually written on (macOS, case-insensitive) opens the harvested folder,
    yet BS-HARVEST-01 passed (found by a hunt); a Destination in another case fails already."""
    repo = copy_tree(BASE / "harvested" / "repo", tmp_path / "root" / "repo")
    with (repo / "README.md").open("a", encoding="utf-8") as readme:
        readme.write(f"\nSee [it]({typed}).\n")
    folder = repo / "docs" / "history" / "brainstorms" / "demo"
    _harvest_fails_on_the_readme_link(repo, folder, tmp_path)


def _harvest_fails_on_the_readme_link(repo: Path, folder: Path, tmp_path: Path) -> None:
    """BS-HARVEST-01 fails at the README's last line, in detect and in crawl and check."""
    line = len((repo / "README.md").read_text(encoding="utf-8").splitlines())
    result = runner.invoke(app, ["detect", str(folder), "--gate", "move"])
    assert result.exit_code == 1, result.output
    assert f"BS-HARVEST-01 fail /README.md:{line}" in result.stdout
    rows = checked_rows(
        tmp_path / "root",
        tmp_path / "out",
        "SELECT status FROM statuses WHERE rule_id = 'BS-HARVEST-01'",
    )
    assert rows == [("fail",)]


def test_an_internal_error_names_the_debug_form_that_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hint said "rerun with --debug", and `census check --debug` is no option (exit 2,
    "No such option"): --debug belongs to census, before the command."""
    import pipeline.check

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ValueError("year 11476 is out of range")

    monkeypatch.setattr(pipeline.check, "check", broken)
    result = runner.invoke(app, ["check", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.strip().endswith("(rerun as census --debug check … to see where)"), (
        result.output
    )


def test_report_html_in_a_missing_folder_names_the_path_given(tmp_path: Path) -> None:
    """It named a temporary `r.html.tmp` the user never gave, and blamed the disk."""
    result = runner.invoke(app, ["report", "--out", str(tmp_path), "--html", "/nonexistent/r.html"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        "census: --html /nonexistent/r.html: the folder /nonexistent does not exist"
    )


def test_a_file_outside_out_that_cannot_be_written_asks_for_another_path(tmp_path: Path) -> None:
    """`detect --sarif` and `sql --output` into a locked folder said "or use another --out":
    detect has no --out, and for sql the path at fault is --output's."""
    from pipeline.errors import system_failure

    out = str(tmp_path / "out")
    denied = PermissionError(13, "Permission denied", str(tmp_path / "locked" / "x.csv"))
    assert "(or give another path)" in str(system_failure(denied, out))
    assert "(or give another path)" in str(system_failure(denied, None))
    inside = PermissionError(13, "Permission denied", str(tmp_path / "out" / "manifest.json"))
    assert "(or use another --out)" in str(system_failure(inside, out))


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_an_output_that_cannot_encode_a_dash_keeps_the_exit_code(
    tmp_path: Path, encoding: str
) -> None:
    """A stdout in Latin-1 or ASCII could not print `–`: the check was committed, then the
    command died with "internal error" and exit 2, where the alarm said 1 (found by a hunt)."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "repo")
    capture = repo / "docs/research/demo-brainstorm/ops/capture.md"
    capture.write_text(capture.read_text() + "\n### T10 · 2026-07-10T16:24Z\nlate.\n")
    env = {**os.environ, "PYTHONIOENCODING": encoding}

    def census(*args: str) -> subprocess.CompletedProcess[bytes]:
        command = [sys.executable, "-m", "pipeline.cli", *args]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=False)

    out = str(tmp_path / "out")
    assert census("crawl", str(repo), "--out", out).returncode == 0
    result = census("check", "--out", out, "--fail-above", "0.01")
    assert result.returncode == 1, result.stderr
    assert b"internal error" not in result.stderr and b"above 1.0%" in result.stderr


def test_detect_writes_a_sessions_control_characters_as_escapes(tmp_path: Path) -> None:
    """A terminal escape in a sync line and a right-to-left override in an aspect reached the
    terminal as they were: the screen could be cleared or a finding's words reversed, and a
    newline in a fragment's name split a finding over two lines (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "repo")
    folder = repo / "docs" / "research" / "demo-brainstorm"
    log = folder / "ops" / "sync-log.md"
    log.write_text(log.read_text() + "\ngarbage \x1b[2J\x1b]0;pwned\x07\n")
    state = folder / "state.md"
    aspects = "- evil\u202e name — a gap → F99\n- \u200fmark — a gap → F98\n"
    state.write_text(state.read_text() + aspects)
    (folder / "fragments" / "notes\nclean").write_text("x\n")
    result = runner.invoke(app, ["detect", str(folder), "--gate", "manifest"])
    assert result.exit_code == 1, result.output
    assert not any(c in result.stdout for c in "\x1b\x07\u202e\u200f"), result.stdout
    assert "\\x1b[2J" in result.stdout and "evil\\u202e name" in result.stdout
    assert "\\u200fmark" in result.stdout
    lines = result.stdout.splitlines()
    assert lines[-1] == "failing" and lines.count("clean") == 0
    assert all(
        line.split(" ", 1)[0] in {"note", "failing"} or line.startswith(("BS-", "CENSUS-"))
        for line in lines
    ), lines


@pytest.mark.parametrize(
    "args",
    [["check"], ["crawl", "{root}"], ["stats"], ["sql", "SELECT 1"]],
    ids=["check", "crawl", "stats", "sql"],
)
def test_a_removed_working_folder_is_one_line_exit_2(
    args: list[str], corpus: Path, crawled: Path, tmp_path: Path
) -> None:
    """Run from a folder that was removed (a shell left in a deleted checkout), check, crawl
    and stats with the default OUT printed two tracebacks and exited 1, the code for findings,
    and sql said "internal error: IOException" (found by a hunt)."""
    import subprocess
    import sys

    census = Path(sys.executable).with_name("census")
    gone = tmp_path / "gone"
    gone.mkdir()
    argv = [a.format(root=corpus, out=crawled) for a in args]
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    done = subprocess.run(
        ["bash", "-c", script, "bash", str(gone), str(census), *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "census: the current folder no longer exists (it was removed or moved); cd to a folder "
        "that exists, and run the command again"
    ]


def test_sql_on_an_out_given_whole_runs_from_a_removed_working_folder(
    crawled: Path, tmp_path: Path
) -> None:
    """Nothing of `census sql "SELECT 1" --out /abs/out` lies in the current folder since
    DuckDB spills under the system's temp folder (until 2026-12-06 its `./.tmp` made even
    this fail with "the current folder no longer exists")."""
    import subprocess
    import sys

    census = Path(sys.executable).with_name("census")
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    argv = [str(census), "sql", "SELECT 42 AS answer", "--out", str(crawled), "--format", "csv"]
    done = subprocess.run(
        ["bash", "-c", script, "bash", str(gone), *argv],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "answer\n42\n", "")


@pytest.mark.parametrize(
    "args",
    [
        ["crawl", "{corpus}", "--out", ""],
        ["crawl", "", "--out", "{tmp}/out"],
        ["run", "", "--out", "{tmp}/out"],
        ["check", "--out", ""],
        ["sql", "SELECT 1", "-o", ""],
    ],
)
def test_an_empty_out_or_root_is_a_usage_error_not_the_current_folder(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """`--out "$OUT"` or a ROOT `"$ROOT"` with the variable unset was the current folder: a
    crawl wrote census.duckdb, manifest.json, state/ and tables/ among the files it crawled,
    exit 0. It is refused in one line, exit 2, as an empty --fail-on-regression is."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    given = [a.format(corpus=corpus, tmp=tmp_path) for a in args]
    result = runner.invoke(app, given)
    assert result.exit_code == 2, result.output
    assert "is empty (an unset variable?)" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert list(work.iterdir()) == [] and not (tmp_path / "out").exists()


def test_a_rerun_says_its_parse_issues_are_those_of_what_it_parsed(tmp_path: Path) -> None:
    """A rerun over unchanged files with parse issues said '0 new snapshots (0 read, 0
    parsed), 0 parse issues' beside a night whose sessions hold them all still: the count is
    said inside the parenthesis of what was parsed."""
    from tests.conftest import generate_corpus

    corpus = generate_corpus(tmp_path / "corpus", 20, 7, 0.2)
    out = str(tmp_path / "out")
    first = runner.invoke(app, ["crawl", str(corpus), "--out", out, "--point", "n1"])
    found = re.search(r"\(20 read, 20 parsed, (\d+) parse issues\), ", first.stdout)
    assert found and int(found[1]) > 0, first.stdout
    again = runner.invoke(app, ["crawl", str(corpus), "--out", out, "--point", "n2"])
    assert "0 new snapshots (0 read, 0 parsed, 0 parse issues), " in again.stdout, again.stdout


def test_a_check_that_evaluates_nothing_new_does_not_say_no_parse_issues(tmp_path: Path) -> None:
    """A check of an unchanged night said '0 snapshots evaluated (no parse issues)' while the
    night's sessions held unread lines (found by a hunt): with none evaluated, it says the
    point's snapshots were evaluated by earlier checks."""
    from tests.conftest import generate_corpus

    corpus = generate_corpus(tmp_path / "corpus", 20, 7, 0.2)
    out = str(tmp_path / "out")
    for point in ("n1", "n2"):
        crawl = runner.invoke(app, ["crawl", str(corpus), "--out", out, "--point", point])
        assert crawl.exit_code == 0, crawl.output
        done = runner.invoke(app, ["check", "--out", out])
        assert done.exit_code == 0, done.output
        said = done.stdout.splitlines()[0]
        if point == "n1":
            assert re.search(r"20 snapshots evaluated \(\d+ with parse issues, \d+ lines\)", said)
    assert "0 snapshots evaluated (the point's snapshots were evaluated by earlier checks)" in said
    assert "no parse issues" not in said


def test_sql_takes_json_as_the_other_commands_do(crawled: Path) -> None:
    """`census sql … --json` ended in Typer's 'unexpected extra argument' (found by a hunt):
    every other command says --json, so sql takes it as --format json."""
    query = "SELECT count(*) AS n FROM runs"
    said = runner.invoke(app, ["sql", query, "--out", str(crawled), "--json"])
    assert said.exit_code == 0, said.output
    spelled = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "json"])
    assert said.stdout == spelled.stdout and json.loads(said.stdout) == [{"n": 1}]
    both = runner.invoke(app, ["sql", query, "--out", str(crawled), "--json", "-f", "csv"])
    assert both.exit_code == 2 and both.stderr.count("\n") == 1, both.output
    assert "--json and --format csv ask for two formats" in both.stderr


def test_a_check_of_a_point_with_no_session_does_not_say_earlier_checks_evaluated_it(
    tmp_path: Path,
) -> None:
    """A point crawled from a folder holding no session said '0 snapshots evaluated (the
    point's snapshots were evaluated by earlier checks)' on its first check, naming checks
    and snapshots that never were (found by a hunt)."""
    (tmp_path / "empty" / "docs" / "research").mkdir(parents=True)
    out = str(tmp_path / "out")
    assert runner.invoke(app, ["crawl", str(tmp_path / "empty"), "--out", out]).exit_code == 0
    done = runner.invoke(app, ["check", "--out", out])
    assert done.exit_code == 0, done.output
    said = done.stdout.splitlines()[0]
    assert "0 snapshots evaluated (no session at the point)" in said, said
    assert "earlier checks" not in said


def test_sql_csv_and_json_spell_an_interval_as_duckdb_does(crawled: Path) -> None:
    """An INTERVAL (`result_at - dispatched_at`) went into CSV and JSON as Python's timedelta:
    a result five minutes before its dispatch read `-1 day, 23:55:00`, one month `30 days,
    0:00:00`, which DuckDB cannot read back (found by a hunt)."""
    query = (
        "SELECT TIMESTAMPTZ '2026-01-01 10:00:00+00' - TIMESTAMPTZ '2026-01-01 10:05:00+00' "
        "AS early, INTERVAL 1 MONTH AS m, INTERVAL 49 HOUR AS h, '\\x00a'::BLOB AS b"
    )
    csv = runner.invoke(app, ["sql", query, "--out", str(crawled), "--format", "csv"])
    assert csv.exit_code == 0, csv.output
    assert csv.output.splitlines() == ["early,m,h,b", "-00:05:00,1 month,49:00:00,\\x00a"]
    back = duckdb.connect()
    for value in csv.output.splitlines()[1].split(",")[:3]:
        back.execute("SELECT CAST(? AS INTERVAL)", [value])  # DuckDB reads each back
    rows = json.loads(runner.invoke(app, ["sql", query, "--out", str(crawled), "--json"]).stdout)
    assert rows == [{"early": "-00:05:00", "m": "1 month", "h": "49:00:00", "b": "\\x00a"}]


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--run", ""],
        ["stats", "--run", " "],
        ["report", "--run", ""],
        ["sql", "SELECT selected_point()", "--run", ""],
        ["compare", "--baseline-run", "", "--candidate-run", "latest"],
        ["compare", "--baseline-run", "latest", "--candidate-run", ""],
        ["stats", "--label", "run="],
        ["crawl", "{corpus}", "--label", "model="],
    ],
)
def test_an_empty_selector_or_label_value_is_a_usage_error_not_the_default(
    corpus: Path, crawled: Path, args: list[str]
) -> None:
    """`--run "$NIGHT"` with the variable unset read as no --run: a script's stats, report
    or eval silently took the latest night (compare's baseline the previous); `--label
    model=$MODEL` stored or selected an empty value (found by a hunt). Refused, exit 2."""
    assert runner.invoke(app, ["check", "--out", str(crawled)]).exit_code == 0
    given = [a.format(corpus=corpus) for a in args]
    result = runner.invoke(app, [*given, "--out", str(crawled)])
    assert result.exit_code == 2, result.output
    assert "(an unset variable?)" in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
