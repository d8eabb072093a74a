"""--git-history on a real repository built in the test, with commits at set dates."""

from __future__ import annotations

import os
import re
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pipeline.check import check
from pipeline.cli import app
from pipeline.crawl import crawl, in_shard
from pipeline.engine import connect
from pipeline.errors import UsageError
from pipeline.maintain import prune
from pipeline.stats import compute
from pipeline.store import Out, read_state
from tests.conftest import FIXTURES, age, copy_tree, git

SESSION = "docs/research/demo-brainstorm"
runner = CliRunner()


def commit(repo: Path, when: str, message: str) -> str:
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    git(repo, "add", "-A", env=dates)
    git(repo, "commit", "-q", "-m", message, env=dates)
    return git(repo, "rev-parse", "HEAD").strip()


def edit(repo: Path, name: str, old: str, new: str) -> None:
    path = repo / SESSION / name
    text = path.read_text()
    assert old in text, f"{old!r} not in {name}"
    path.write_text(text.replace(old, new))


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    shas = {"first": commit(repo, "2026-07-08T15:00:00Z", "open the session")}
    edit(repo, "state.md", "Status: open", "Status: stopping")
    shas["stopping"] = commit(repo, "2026-07-09T15:00:00Z", "start stopping")
    edit(repo, "state.md", "Status: stopping", "Status: open")
    edit(repo, "ledger.md", "users asked for fewer emails", "users asked for fewer, better emails")
    edit(repo, "forks.md", "Whose clock decides the send window?", "Which clock sends?")
    shas["backward"] = commit(repo, "2026-07-10T15:00:00Z", "step back and rewrite")
    (repo / SESSION / "ops" / "capture.md").write_text("### T1 · 2026-07-10T16:00Z\nraw\n")
    git(repo, "add", "-f", f"{SESSION}/ops/capture.md")
    shas["ops"] = commit(repo, "2026-07-11T15:00:00Z", "oops: commit the capture")
    git(repo, "rm", "-q", "--cached", f"{SESSION}/ops/capture.md")
    shas["untracked"] = commit(repo, "2026-07-12T15:00:00Z", "untrack the capture again")
    return repo, shas


def test_one_snapshot_per_commit_with_commit_time(
    history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, shas = history
    out = Out(tmp_path / "out")
    crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    con = connect(out)
    rows = con.execute(
        "SELECT \"commit\", strftime(observed_at, '%Y-%m-%dT%H:%M') "
        "FROM observations ORDER BY observed_at"
    ).fetchall()
    assert rows[:5] == [
        (shas["first"], "2026-07-08T15:00"),
        (shas["stopping"], "2026-07-09T15:00"),
        (shas["backward"], "2026-07-10T15:00"),
        (shas["ops"], "2026-07-11T15:00"),
        (shas["untracked"], "2026-07-12T15:00"),
    ]
    assert rows[5][0] is None, "the working tree is observed last, at the run's time"
    assert len(rows) == 6


@pytest.fixture
def checked(history: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[dict[str, str], Any]:
    """The history crawled with --git-history and checked: (commit ids, a DuckDB connection)."""
    repo, shas = history
    out = Out(tmp_path / "out")
    crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    check(str(out.root))
    return shas, connect(out)


def test_series_rules_flag_the_commit_that_broke_them(checked: tuple[dict[str, str], Any]) -> None:
    shas, con = checked
    series = con.execute(
        """
        SELECT DISTINCT o."commit", f.rule_id, f.message
        FROM series_findings f JOIN observations o USING (snapshot_id)
        WHERE o."commit" IS NOT NULL
        ORDER BY 1, 2
        """
    ).fetchall()
    by_commit: dict[str, set[str]] = {}
    for sha, rule, _ in series:
        by_commit.setdefault(sha, set()).add(rule)
    assert by_commit == {shas["backward"]: {"BS-STATE-01", "BS-LEDGER-01", "BS-FORK-01"}}
    messages = {rule: msg for _, rule, msg in series}
    assert "moved backward from stopping" in messages["BS-STATE-01"]
    assert f"commit {shas['stopping'][:12]}" in messages["BS-STATE-01"]
    assert "D1 was rewritten" in messages["BS-LEDGER-01"] and "Why" in messages["BS-LEDGER-01"]
    assert "F2 was retitled" in messages["BS-FORK-01"]
    # The ops/ file is flagged on the commit that tracked it, and not once it is untracked.
    ops = con.execute(
        """
        SELECT o."commit", r.status FROM observations o JOIN rule_results r USING (snapshot_id)
        WHERE r.rule_id = 'BS-OPS-02' AND o."commit" IS NOT NULL AND r.gate = r.rule_gate
        """
    ).fetchall()
    assert dict(ops)[shas["ops"]] == "fail" and dict(ops)[shas["untracked"]] == "pass"


def test_series_found_on_copies_of_the_changed_series_are_those_found_on_every_file(
    history: tuple[Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check copies the changed series' content into temp tables when they are few, and reads
    OUT's files when they are many: the two ways find the same rows."""
    import pipeline.check

    repo, _ = history
    found = []
    for limit in (pipeline.check.SERIES_CONTENT_LIMIT, 0):
        monkeypatch.setattr(pipeline.check, "SERIES_CONTENT_LIMIT", limit)
        out = tmp_path / f"out-{limit}"
        crawl([str(repo.parent)], str(out), workers=1, git_history=True)
        check(str(out))
        query = "SELECT rule_id, file, line, message FROM series_findings ORDER BY ALL"
        found.append(connect(Out(out)).execute(query).fetchall())
    assert len({r[0] for r in found[0]}) == 3 and found[0] == found[1], found


def test_series_findings_fail_the_session_at_its_census_point(
    checked: tuple[dict[str, str], Any],
) -> None:
    """The night's rates see what happened in history since the previous night."""
    _, con = checked
    failing = {
        r[0]
        for r in con.execute(
            "SELECT rule_id FROM statuses WHERE own AND status = 'fail'"
        ).fetchall()
    }
    assert {"BS-STATE-01", "BS-LEDGER-01", "BS-FORK-01"} <= failing
    rates = dict(
        con.execute("SELECT rule_id, failed FROM rule_rates WHERE rule_id LIKE 'BS-%'").fetchall()
    )
    assert rates["BS-STATE-01"] == rates["BS-LEDGER-01"] == rates["BS-FORK-01"] == 1


def test_a_recheck_repeats_the_findings_never_adds_to_them(
    checked: tuple[dict[str, str], Any], tmp_path: Path
) -> None:
    """Each check writes its findings again: a point counts those of its latest check."""
    out = Out(tmp_path / "out")  # the fixture's OUT

    def seen() -> tuple[Any, ...]:
        fresh = connect(out)
        return (
            fresh.execute("SELECT count(*) FROM findings").fetchone(),
            fresh.execute("SELECT sum(findings) FROM statuses").fetchone(),
            fresh.execute("SELECT count(*) FROM point_series_findings").fetchone(),
        )

    before = seen()
    assert before[2][0] == 3
    check(str(out.root), recheck=True)
    check(str(out.root), recheck=True)
    assert seen() == before
    assert connect(out).execute("SELECT count(*) FROM series_findings").fetchone() == (9,)


def test_a_change_to_the_macros_the_series_queries_call_is_a_rule_set_change(
    tmp_path: Path,
) -> None:
    """as_shown (queries/views/05_macros.sql) decides what BS-FORK-01 and BS-LEDGER-01 find
    along a history, so a release changing it alone is a rule-set change. Found by a hunt: the
    rule set hashed the rule files and two history views only, so after such a release (as
    when bolding a word stopped being a retitle) check said nothing and --recheck copied the
    old findings instead of finding them again."""
    import re
    import subprocess
    import sys

    from pipeline import rules
    from pipeline.resources import queries_dir
    from pipeline.rules import ruleset

    views = queries_dir() / "views"
    files = [*(queries_dir() / "rules").glob("*.sql"), *(queries_dir() / "series").rglob("*.sql")]
    called = "\n".join(p.read_text() for p in files)
    hashed = set()
    for sql in sorted(views.glob("*.sql")):
        names = re.findall(r"CREATE (?:OR REPLACE )?(?:VIEW|MACRO) (\w+)", sql.read_text())
        if any(re.search(rf"\b{name}\s*\(|\b(?:FROM|JOIN)\s+{name}\b", called) for name in names):
            hashed.add(sql.name)
    assert "05_macros.sql" in hashed  # as_shown, without_reversal
    assert hashed <= set(getattr(rules, "RULE_VIEWS", ()))
    # The same census with another as_shown: its rule set is another.
    copy = tmp_path / "census"
    root = Path(__file__).resolve().parent.parent
    for part in ("pipeline", "queries"):
        shutil.copytree(root / part, copy / part)
    macros = copy / "queries" / "views" / "05_macros.sql"
    text = macros.read_text()
    macros.write_text(text.replace("replace(shown_markup(t), '*', '')", "shown_markup(t)", 1))
    assert macros.read_text() != text
    other = subprocess.run(
        [sys.executable, "-c", "from pipeline.rules import ruleset; print(ruleset())"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(copy)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert other and other != ruleset()


def test_findings_written_before_they_named_their_check_count_until_a_recheck(
    checked: tuple[dict[str, str], Any], tmp_path: Path
) -> None:
    """An OUT of an older census has findings without check_id: they are the point's until a
    check of this census writes its own, never both."""
    out = Out(tmp_path / "out")
    for part in (out.tables / "series_findings").rglob("*.parquet"):
        legacy = connect(None)
        legacy.execute(
            f"COPY (SELECT * EXCLUDE (check_id) FROM read_parquet('{part}')) "
            f"TO '{part}.old' (FORMAT parquet)"
        )
        Path(f"{part}.old").replace(part)
    assert connect(out).execute("SELECT count(*) FROM point_series_findings").fetchone() == (3,)
    check(str(out.root), recheck=True)
    fresh = connect(out)
    assert fresh.execute("SELECT count(*) FROM point_series_findings").fetchone() == (3,)
    assert fresh.execute("SELECT count(*) FROM series_findings").fetchone() == (6,)


def test_working_tree_fails_ops_02_for_an_ops_file_any_commit_tracked(
    checked: tuple[dict[str, str], Any],
) -> None:
    shas, con = checked
    rows = con.execute(
        """
        SELECT r.status, r.message FROM observations o JOIN rule_results r USING (snapshot_id)
        WHERE o."commit" IS NULL AND r.rule_id = 'BS-OPS-02' AND r.gate = r.rule_gate
        """
    ).fetchall()
    assert len(rows) == 1 and rows[0][0] == "fail"
    assert rows[0][1].startswith(f"ops/capture.md is tracked by git (commit {shas['ops']})")


def test_a_commit_snapshot_without_ops_skips_each_manifest_rule_for_that_reason(
    tmp_path: Path,
) -> None:
    """A commit keeps no ops/ (it is ignored), so the manifest is not there to read: every rule
    that reads it is skipped because ops/ is not kept in git, BS-HARVEST-01 included — never
    `no manifest`, which would say the session had none (the working tree has one)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2026-07-10T17:00:00Z", "apply the harvest")
    out = Out(tmp_path / "out")
    crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    check(str(out.root))
    rows = dict(
        connect(out)
        .execute(
            """
            SELECT r.rule_id, r.message FROM observations o JOIN rule_results r USING (snapshot_id)
            WHERE o."commit" IS NOT NULL AND r.gate = 'move' AND r.status = 'skipped'
            """
        )
        .fetchall()
    )
    ops_rules = {"BS-OPS-01", "BS-COMPOSE-02", "BS-SYNC-01", "BS-SYNC-02", "BS-MANIFEST-01"}
    manifest_rules = {"BS-USELESS-01", "CENSUS-MOVE-01", "BS-HARVEST-01"}
    assert rows == dict.fromkeys(
        ops_rules | manifest_rules, "ops/ is not kept in git (a commit snapshot)"
    )


def test_a_commit_s_link_into_the_folder_written_in_another_case_fails_harvest_01(
    tmp_path: Path,
) -> None:
    """A guide links into the harvested folder as `../History/Brainstorms/demo/`: the folders
    are compared blind to case, so the working tree fails BS-HARVEST-01, and so must the
    commit holding the same guide (found by a hunt: its copy was never parsed, as the text
    test for `brainstorm` minded the case, and the commit passed)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "harvested" / "repo", tmp_path / "root" / "repo")
    (repo / "docs" / "guides").mkdir()
    guide = "# Tour\n\nSee [the session](../History/Brainstorms/demo/thesis.md).\n"
    (repo / "docs" / "guides" / "tour.md").write_text(guide, encoding="utf-8")
    git(repo, "init", "-q")
    commit(repo, "2026-07-12T15:00:00Z", "harvest, with a link left behind")
    out = Out(tmp_path / "out")
    crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    check(str(out.root))
    rows = (
        connect(out)
        .execute(
            """
            SELECT o."commit" IS NULL, r.status FROM observations o
            JOIN rule_results r USING (snapshot_id)
            WHERE r.rule_id = 'BS-HARVEST-01' AND r.gate = 'move' ORDER BY 1
            """
        )
        .fetchall()
    )
    assert rows == [(False, "fail"), (True, "fail")]


def _working_tree_ops_02(root: Path, out_path: Path) -> list[tuple[str, str]]:
    """BS-OPS-02's status and message on each working tree of a --git-history crawl of root."""
    out = Out(out_path)
    crawl([str(root)], str(out.root), workers=1, git_history=True)
    check(str(out.root))
    query = """
        SELECT r.status, r.message FROM observations o JOIN rule_results r USING (snapshot_id)
        WHERE o."commit" IS NULL AND r.rule_id = 'BS-OPS-02' AND r.gate = r.rule_gate
    """
    rows: list[tuple[str, str]] = connect(out).execute(query).fetchall()
    return rows


@pytest.mark.parametrize("at", ["session", "ops"])
def test_a_nested_working_tree_s_commits_that_tracked_an_ops_file_fail_ops_02(
    tmp_path: Path, at: str
) -> None:
    """A session folder that is a submodule (or an ops/ that is a clone of its own): one of
    its own commits tracked ops/capture.md, a later one untracked it. With --git-history,
    BS-OPS-02 failed only for the repository's commits, whose trees hold a gitlink, so
    the working tree passed (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    inner = repo / SESSION / ("ops" if at == "ops" else "")
    source = tmp_path / "source"
    shutil.move(str(inner), str(source))
    git(source, "init", "-q")
    capture = "capture.md" if at == "ops" else "ops/capture.md"
    (source / capture).write_text("### T1 · 2026-07-10T16:00Z\nraw\n")
    git(source, "add", "-f", capture)
    sha = commit(source, "2026-07-10T15:00:00Z", "oops: commit the capture")
    git(source, "rm", "-q", "--cached", capture)
    commit(source, "2026-07-11T15:00:00Z", "untrack it")
    git(repo, "init", "-q")
    add = ("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source))
    git(repo, *add, str(inner.relative_to(repo)))
    commit(repo, "2026-07-12T15:00:00Z", "the session as a submodule")
    # The files git left out of the checkout (ops/ ignores itself) come back from the source.
    shutil.copytree(source, inner, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git"))
    rows = _working_tree_ops_02(repo.parent, tmp_path / "out")
    # An ops/ that is a submodule is also tracked itself, as a gitlink: ops/ entered git.
    expected = ["ops is tracked by git"] if at == "ops" else []
    assert sorted(m[:21] for _, m in rows) == sorted([*expected, "ops/capture.md is tra"])
    assert {status for status, _ in rows} == {"fail"}
    assert any(m.startswith(f"ops/capture.md is tracked by git (commit {sha})") for _, m in rows)


def test_a_nested_working_tree_s_ops_file_committed_before_the_move_to_history_fails_ops_02(
    tmp_path: Path,
) -> None:
    """docs/ is a clone of its own: one of its commits tracked ops/capture.md while the
    session was in docs/research/, a later one moved it to docs/history/brainstorms/ without
    ops/. BS-OPS-02 asked that clone only for the history folder's ops/, so the file, which
    stays in history (spec §5), passed; in the repository's own history it fails (found by a
    hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    docs = repo / "docs"
    git(docs, "init", "-q")
    git(docs, "add", "-f", "research/demo-brainstorm/ops/capture.md")
    sha = commit(docs, "2026-07-10T15:00:00Z", "the session, with its capture")
    (docs / "history" / "brainstorms").mkdir(parents=True)
    git(docs, "mv", "research/demo-brainstorm", "history/brainstorms/demo")
    shutil.rmtree(docs / "history" / "brainstorms" / "demo" / "ops")
    git(docs, "add", "-A")
    commit(docs, "2026-07-11T15:00:00Z", "harvest")
    rows = _working_tree_ops_02(repo.parent, tmp_path / "out")
    assert [status for status, _ in rows] == ["fail"]
    assert rows[0][1].startswith(f"ops/capture.md is tracked by git (commit {sha})")


@pytest.mark.parametrize("at", ["repository", "session"])
def test_an_ops_folder_of_another_case_that_a_commit_tracked_fails_ops_02(
    tmp_path: Path, at: str
) -> None:
    """A commit tracked Ops/notes.md (ops/ in another case, beside ops/), a later one removed it
    (found by a hunt): BS-OPS-02 fails `Ops/` in the index, but with --git-history the
    commits were searched for `ops/` exactly, in the repository's history and in that of a
    session folder that is a clone of its own, so the working tree passed."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2026-07-10T15:00:00Z", "the repository")
    owner, inside = (repo, f"{SESSION}/Ops") if at == "repository" else (repo / SESSION, "Ops")
    if at == "session":
        git(owner, "init", "-q")
        commit(owner, "2026-07-10T16:00:00Z", "the session as a clone of its own")
    (owner / inside).mkdir()
    (owner / inside / "notes.md").write_text("raw\n", encoding="utf-8")
    git(owner, "add", "-f", f"{inside}/notes.md")
    sha = commit(owner, "2026-07-11T15:00:00Z", "oops: commit the notes")
    shutil.rmtree(owner / inside)
    commit(owner, "2026-07-12T15:00:00Z", "remove them")
    rows = _working_tree_ops_02(repo.parent, tmp_path / "out")
    assert [status for status, _ in rows] == ["fail"]
    assert rows[0][1].startswith(f"Ops/notes.md is tracked by git (commit {sha})")


def test_a_nested_working_tree_s_history_is_read_once_for_all_its_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/ a clone of its own holding three sessions: with --git-history its commits were
    read by one `git log` (and HEAD resolved) per session, on every crawl, reruns too, so a
    docs/ clone of many sessions cost a walk of its whole history each (found by a hunt).
    One walk now serves them all."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    for topic in ("second", "third"):
        shutil.copytree(repo / SESSION, repo / f"docs/research/{topic}-brainstorm")
    git(repo, "init", "-q")
    commit(repo, "2026-07-10T15:00:00Z", "the repository")
    git(repo / "docs", "init", "-q")
    commit(repo / "docs", "2026-07-11T15:00:00Z", "docs as a clone of its own")
    calls = tmp_path / "calls"
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    real = shutil.which("git")
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}")
    crawl([str(repo.parent)], str(tmp_path / "out"), workers=1, git_history=True)
    walks = [c for c in calls.read_text().splitlines() if f"-C {repo / 'docs'} " in c]
    assert sum(" log " in c for c in walks) == 1


def test_a_nested_working_tree_whose_history_git_cannot_walk_fails_ops_02(tmp_path: Path) -> None:
    """A session folder that is a clone whose HEAD git cannot resolve (an empty branch ref):
    with --git-history whether one of its commits tracked an ops/ file is unknown, so
    BS-OPS-02 fails, naming it, instead of passing (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2026-07-10T15:00:00Z", "the repository")
    session = repo / SESSION
    git(session, "init", "-q")
    commit(session, "2026-07-11T15:00:00Z", "the session as a clone of its own")
    (session / ".git" / "refs" / "heads" / "main").write_text("")
    rows = _working_tree_ops_02(repo.parent, tmp_path / "out")
    assert [status for status, _ in rows] == ["fail"]
    assert f"git could not read the history of {session}" in rows[0][1]


@pytest.mark.parametrize(
    ("target", "link", "said"),
    [
        ("repo/shared/demo", "../../shared/demo", "symbolic link to shared/demo inside"),
        ("shared/demo", "../../../shared/demo", "symbolic link to a folder outside"),
    ],
)
def test_a_session_folder_that_is_a_link_fails_its_series_rules_closed(
    tmp_path: Path, target: str, link: str, said: str
) -> None:
    """A session folder that is a symbolic link to a folder elsewhere in its repository
    (`docs/research/demo-brainstorm -> ../../shared/demo`), or outside it: git keeps its
    commits under the target, or in no commit of the repository, which --git-history did
    not read, so a Status stepped back there passed BS-STATE-01 with no word said (found by
    a hunt). The series rules now fail, naming why."""
    root = tmp_path / "root"
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "repo")
    git(repo, "init", "-q")
    (root / target).parent.mkdir(parents=True)
    (repo / SESSION).rename(root / target)
    (repo / SESSION).symlink_to(Path(link))
    repos = [repo] if target.startswith("repo/") else [repo, root / target]
    if len(repos) == 2:
        git(root / target, "init", "-q")
    for step, status in enumerate(("open", "stopping", "open")):
        state = root / target / "state.md"
        state.write_text(state.read_text().replace("Status: open", f"Status: {status}"))
        state.write_text(state.read_text().replace("Status: stopping", f"Status: {status}"))
        for each in repos if step == 0 else repos[-1:]:
            commit(each, f"2026-07-{8 + step:02d}T15:00:00Z", f"status {status}")
    out = Out(tmp_path / "out")
    crawl([str(root)], str(out.root), workers=1, git_history=True)
    check(str(out.root))
    con = connect(out)
    rows = con.execute(
        "SELECT rule_id, status FROM statuses WHERE own AND rule_id IN "
        "('BS-STATE-01', 'BS-FORK-01', 'BS-LEDGER-01') ORDER BY 1"
    ).fetchall()
    assert rows == [("BS-FORK-01", "fail"), ("BS-LEDGER-01", "fail"), ("BS-STATE-01", "fail")]
    noted = con.execute(
        "SELECT DISTINCT message FROM parse_issues WHERE code = 'history-incomplete'"
    ).fetchall()
    assert len(noted) == 1 and said in noted[0][0], noted


def test_without_git_history_only_the_working_tree(
    history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, _ = history
    out = Out(tmp_path / "out")
    summary = crawl([str(repo.parent)], str(out.root), workers=1)
    assert summary.sessions == 1
    con = connect(out)
    assert con.execute("SELECT count(*) FROM observations").fetchone() == (1,)


def test_history_rerun_reads_nothing_again(
    history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, _ = history
    out = Out(tmp_path / "out")
    crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    again = crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    assert (again.read, again.parsed) == (0, 0)


def _forks_committed(repo: Path, compose: str, when: str, message: str) -> None:
    """The repository made a git one, its forks.md FORKS_T1 and its compose at `compose`,
    committed at `when`."""
    git(repo, "init", "-q")
    (repo / SESSION / "forks.md").write_text(FORKS_T1)
    _set_compose(repo, compose)
    commit(repo, when, message)


def _set_compose(repo: Path, when: str) -> None:
    """Last compose and the thesis stamp move together (BS-COMPOSE-01 stays clean)."""
    for name, prefix in (("state.md", "- Last compose: "), ("thesis.md", "Current as of: ")):
        path = repo / SESSION / name
        lines = [
            f"{prefix}{when}" if line.startswith(prefix) else line
            for line in path.read_text().splitlines()
        ]
        path.write_text("\n".join(lines) + "\n")


FORKS_T1 = """# Forks

## F1 — Do security alerts ever ride in a digest? [open]
- Raised by: user
- Closes when: a yes/no per alert class

## F2 — Whose clock decides the send window? [open]
- Raised by: user
- Closes when: a pick of time zone

## F5 — Should digests batch by team? [open]
- Raised by: user
- Closes when: a pick
"""


def _resolve_f1(repo: Path) -> None:
    """F1 leaves forks.md, and a new ledger entry D3 resolves it."""
    text = (repo / SESSION / "forks.md").read_text()
    (repo / SESSION / "forks.md").write_text(
        text.split("## F1")[0] + "## F2" + text.split("## F2")[1]
    )
    ledger = repo / SESSION / "ledger.md"
    ledger.write_text(
        ledger.read_text() + "\n## D3 — Alerts never ride in a digest\n"
        "- Decision: security alerts always send at once.\n- Why: a missed one costs more.\n"
        "- How to apply: the digestible flag is false for them.\n- Resolves: F1\n"
    )


def test_lifetimes_from_commit_dates(tmp_path: Path) -> None:
    """Forks raised, parked and resolved across dated commits; one left open (censored); their
    lifetimes in reconciled syncs from the working tree's sync log (spec §7).

    In a commit snapshot ops/ is absent, so a snapshot's content_time is its Last compose,
    set here to each commit's date: lifetimes are the differences of those dates.
    """
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    ops = repo / SESSION / "ops"
    # ops/ stays out of git (its .gitignore); in the working tree it is older than the last compose.
    (ops / "capture.md").write_text("### T1 · 2026-07-01T09:00Z\nraw\n")
    (ops / "sync-log.md").write_text(
        "S1 | gate: intake | dispatched: 2026-07-01T09:10Z | scope: full\n"
        "S1 → reconciled | 2026-07-01T09:20Z | 1 edits · 3 new forks · 3 open\n"
        "S2 | gate: intake | dispatched: 2026-07-02T09:00Z | scope: full\n"
        "S2 → reconciled | 2026-07-02T09:30Z | 1 edits · 0 new forks · 3 open\n"
    )
    _forks_committed(repo, "2026-07-01T10:00Z", "2026-07-01T10:00:00Z", "F1, F2, F5 open")
    forks = (repo / SESSION / "forks.md").read_text()
    forks = forks.replace(
        "[open]\n- Raised by: user\n- Closes when: a pick of time zone",
        "[parked → docs/architecture/open-questions.md]\n- Raised by: user\n"
        "- Closes when: a pick of time zone",
    )
    (repo / SESSION / "forks.md").write_text(forks)
    _set_compose(repo, "2026-07-02T16:00Z")
    commit(repo, "2026-07-02T16:00:00Z", "park F2 after 30 h")
    _resolve_f1(repo)
    _set_compose(repo, "2026-07-04T10:00Z")
    commit(repo, "2026-07-04T10:00:00Z", "resolve F1 after 72 h")
    out = Out(tmp_path / "out")
    crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    con = connect(out)
    rows = con.execute(
        """
        SELECT fork_id, close_kind, censored, round(hours, 3), syncs
        FROM fork_lifetimes WHERE fork_id IN ('F1', 'F2', 'F5') ORDER BY fork_id
        """
    ).fetchall()
    # The working tree (observed at the run's time) has the same content as the last commit.
    # Lifetime in syncs (S2, between every raise and close) comes from the working tree's
    # sync log: git never holds ops/, so no commit that closed a fork has one.
    assert rows == [
        ("F1", "resolved", False, 72.0, 1),
        ("F2", "parked", False, 30.0, 1),
        ("F5", None, True, 72.0, 1),
    ]


def _night(repo: Path, out: Path, night: int, root: str | None = None) -> None:
    crawl([root or str(repo.parent)], str(out), workers=1, git_history=True, point=f"night-{night}")
    check(str(out))


def _series(out: Path) -> list[tuple[str, str, str]]:
    return (
        connect(Out(out))
        .execute("SELECT point, rule_id, message FROM series_findings ORDER BY point, rule_id")
        .fetchall()
    )


def _night_rates(out: Path, night: int) -> str:
    rows = connect(Out(out)).execute(
        "SELECT * EXCLUDE (position) FROM rule_rates WHERE point = ? ORDER BY rule_id",
        [f"night-{night}"],
    )
    return repr(rows.fetchall())


def test_an_old_dated_merged_branch_is_read_along_ancestry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A branch forked before F1 was resolved, with commits dated before the first night and
    merged on the third: by date F1 would 'reappear after D3 resolved it'; along git ancestry
    nothing happened. The root is spelled relative on one night and absolute on the others."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2026-07-01T10:00:00Z", "F1 and F2 open")
    out = tmp_path / "out"
    _night(repo, out, 1)
    night_one = _night_rates(out, 1)
    git(repo, "checkout", "-q", "-b", "notes", "HEAD")
    (repo / SESSION / "fragments" / "notes.md").write_text("# Notes\nraw notes\n")
    commit(repo, "2026-06-20T10:00:00Z", "notes, written long ago")
    git(repo, "checkout", "-q", "main")
    _resolve_f1(repo)
    commit(repo, "2026-07-02T10:00:00Z", "resolve F1")
    monkeypatch.chdir(tmp_path)
    _night(repo, out, 2, root="root")  # the same root, spelled relative
    dates = {
        "GIT_AUTHOR_DATE": "2026-07-03T10:00:00Z",
        "GIT_COMMITTER_DATE": "2026-07-03T10:00:00Z",
    }
    git(repo, "merge", "-q", "--no-ff", "-m", "merge the notes", "notes", env=dates)
    _night(repo, out, 3)
    assert _series(out) == [], "no finding along ancestry, whatever the dates"
    assert connect(Out(out)).execute(
        "SELECT count(DISTINCT root) FROM observations"
    ).fetchone() == (1,)
    assert _night_rates(out, 1) == night_one, "night 1 did not move"
    # A backward step committed on night 4 fails night 4, and no other.
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-04T10:00:00Z", "stopping")
    _night(repo, out, 4)
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-05T10:00:00Z", "back to open")
    _night(repo, out, 5)
    _night(repo, out, 6)
    found = _series(out)
    assert [(p, r) for p, r, _ in found] == [("night-5", "BS-STATE-01")]
    assert "moved backward from stopping" in found[0][2]


def test_an_uncommitted_step_back_is_counted_once(tmp_path: Path) -> None:
    """Seen in the working tree on night 2, left so on night 3, then committed unchanged
    before night 4: the commit records the step night 2 counted, so it fails night 2 alone."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    out = tmp_path / "out"
    _night(repo, out, 1)
    edit(repo, "state.md", "Status: stopping", "Status: open")  # not committed
    _night(repo, out, 2)
    _night(repo, out, 3)
    commit(repo, "2026-07-02T10:00:00Z", "back to open, committed")
    _night(repo, out, 4)
    assert [(p, r) for p, r, _ in _series(out)] == [("night-2", "BS-STATE-01")]
    failing = (
        connect(Out(out))
        .execute(
            "SELECT point FROM statuses WHERE rule_id = 'BS-STATE-01' AND status = 'fail' "
            "ORDER BY 1"
        )
        .fetchall()
    )
    assert failing == [("night-2",)]
    # Night 3 repeats night 2's trees but not its finding: its frozen rate has no failure.
    rates = (
        connect(Out(out))
        .execute(
            "SELECT point, failed FROM rule_rates WHERE rule_id = 'BS-STATE-01' ORDER BY point"
        )
        .fetchall()
    )
    assert rates == [("night-1", 0), ("night-2", 1), ("night-3", 0), ("night-4", 0)]


def test_a_later_crawl_never_moves_a_checked_points_harvest_time(tmp_path: Path) -> None:
    """Night 1 sees the harvested folder without history (harvested when first seen); night 2
    reads the commit that moved it, dated weeks before: night 2 knows the earlier time, night
    1 keeps the one it was checked with."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2026-07-01T10:00:00Z", "research")
    (repo / "docs" / "history" / "brainstorms").mkdir(parents=True)
    git(repo, "mv", SESSION, "docs/history/brainstorms/demo")
    commit(repo, "2026-07-20T10:00:00Z", "harvest")
    out = tmp_path / "out"
    crawl([str(repo.parent)], str(out), workers=1, point="night-1")
    check(str(out))
    query = "SELECT point, harvested_at::VARCHAR FROM sessions ORDER BY point"
    night_one = connect(Out(out)).execute(query).fetchall()
    assert len(night_one) == 1 and not night_one[0][1].startswith("2026-07-20")
    _night(repo, out, 2)
    assert connect(Out(out)).execute(query).fetchall() == [
        night_one[0],
        ("night-2", "2026-07-20 10:00:00+00"),
    ]


def test_credentials_in_the_origin_url_never_reach_the_tables_or_the_report(
    history: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """A token written into the remote (`https://user:token@host/…`) is no part of the
    repository's identity: the tables, and so the report, show the URL without it."""
    from pipeline.report import build

    repo, _ = history
    git(repo, "remote", "add", "origin", "https://bob:s3cr3t-token@example.invalid/team/repo.git")
    out = tmp_path / "out"
    crawl([str(repo.parent)], str(out), workers=1, git_history=True)
    check(str(out))
    repos = connect(Out(out)).execute("SELECT DISTINCT repo FROM observations").fetchall()
    assert repos == [("https://example.invalid/team/repo.git",)]
    html = Path(build(str(out)).path).read_text()
    assert "example.invalid/team/repo.git" in html and "s3cr3t" not in html


def test_an_id_listed_twice_is_not_retitled_or_rewritten_at_every_change(tmp_path: Path) -> None:
    """F2 and D2 each listed twice (BS-FORK-01 and BS-LEDGER-01 fail in every snapshot for
    that): a night that changes something else adds no finding along history; a night that
    gives one of the F2s a title it never had, or rewrites one D2, does."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    session = repo / SESSION
    forks, ledger = session / "forks.md", session / "ledger.md"
    forks.write_text(forks.read_text() + "\n## F2 — A second F2 [open]\n- Raised by: user\n")
    entry = "\n## D2 — Again\n- Decision: x\n- Why: y\n- How to apply: z\n"
    ledger.write_text(ledger.read_text() + entry)
    out = tmp_path / "out"
    _night(repo, out, 1)
    forks.write_text(forks.read_text() + "\n## F9 — Unrelated [open]\n- Raised by: user\n")
    _night(repo, out, 2)
    forks.write_text(forks.read_text().replace("A second F2", "A new title"))
    ledger.write_text(ledger.read_text().replace("- Why: y", "- Why: changed"))
    _night(repo, out, 3)
    assert [(point, rule) for point, rule, _ in _series(out)] == [
        ("night-3", "BS-FORK-01"),
        ("night-3", "BS-LEDGER-01"),
    ]
    messages = [message for _, _, message in _series(out)]
    assert messages[0].startswith("F2 was retitled: 'A second F2' or 'Whose clock decides")
    assert "became 'A new title'" in messages[0]
    assert messages[1].startswith("D2 was rewritten") and "(Why changed)" in messages[1]


def test_a_session_missing_for_a_night_is_compared_with_its_last_seen_tree(
    tmp_path: Path,
) -> None:
    """Night 1 sees the session stopping, night 2 does not see it at all, night 3 sees it open
    again: the step back is between night 1 and night 3 (the session's previous point is the
    last that saw it, however far back), and fails night 3."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    out = tmp_path / "out"
    aside = tmp_path / "aside"

    def night(number: int) -> None:
        crawl([str(repo.parent)], str(out), workers=1, point=f"night-{number}")
        check(str(out))

    night(1)
    (repo / SESSION).rename(aside)
    night(2)
    aside.rename(repo / SESSION)
    edit(repo, "state.md", "Status: stopping", "Status: open")
    night(3)
    found = _series(out)
    assert [(p, r) for p, r, _ in found] == [("night-3", "BS-STATE-01")]
    con = connect(Out(out))
    first_run = con.execute("SELECT runs[1] FROM points WHERE point = 'night-1'").fetchone()[0]
    assert f"(run {first_run})" in found[0][2], found[0][2]


def test_a_step_back_or_a_reused_id_is_seen_past_a_night_that_hid_it(tmp_path: Path) -> None:
    """Night 2 shows no Status to rank (a typo) and no F2 (deleted); night 3 is open again,
    with a new question under F2. Both are measured from night 1, the last that showed them,
    and fail night 3; night 2 fails only for its own unreadable Status."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    forks = repo / SESSION / "forks.md"
    original = forks.read_text()
    edit(repo, "state.md", "Status: open", "Status: stopping")
    out = tmp_path / "out"

    def night(number: int) -> None:
        crawl([str(repo.parent)], str(out), workers=1, point=f"night-{number}")
        check(str(out))

    night(1)
    edit(repo, "state.md", "Status: stopping", "Status: stoping")
    head, f2 = original.split("## F2", 1)
    forks.write_text(head)
    night(2)
    edit(repo, "state.md", "Status: stoping", "Status: open")
    forks.write_text(
        head + "## F2" + f2.replace("Whose clock decides the send window?", "Who pays?")
    )
    night(3)
    found = _series(out)
    assert sorted((p, r) for p, r, _ in found) == [
        ("night-3", "BS-FORK-01"),
        ("night-3", "BS-STATE-01"),
    ], found
    first_run = (
        connect(Out(out))
        .execute("SELECT runs[1] FROM points WHERE point = 'night-1'")
        .fetchone()[0]
    )
    messages = {r: m for _, r, m in found}
    assert "moved backward from stopping" in messages["BS-STATE-01"]
    assert "F2 was retitled" in messages["BS-FORK-01"] and "Who pays?" in messages["BS-FORK-01"]
    assert all(f"(run {first_run})" in m for m in messages.values()), messages


@pytest.mark.parametrize("hide", ["typo", "deleted"])
def test_a_step_back_is_seen_past_a_commit_that_hid_it_in_the_same_night(
    tmp_path: Path, hide: str
) -> None:
    """One night's commits go stopping, then no Status to rank (a typo, or state.md deleted),
    then open: the step back is measured from the nearest earlier commit that showed a Status,
    by ancestry, not only from the commit beside it, and fails the night."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2026-07-08T15:00:00Z", "open the session")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    stopping = commit(repo, "2026-07-09T15:00:00Z", "start stopping")
    state = repo / SESSION / "state.md"
    kept = state.read_text()
    if hide == "typo":
        edit(repo, "state.md", "Status: stopping", "Status: stoping")
    else:
        state.unlink()
    commit(repo, "2026-07-10T15:00:00Z", "lose the Status")
    state.write_text(kept.replace("Status: stopping", "Status: open"))
    commit(repo, "2026-07-11T15:00:00Z", "open again")
    _night(repo, tmp_path / "out", 1)
    found = [(p, r, m) for p, r, m in _series(tmp_path / "out") if r == "BS-STATE-01"]
    assert len(found) == 1, found
    assert "moved backward from stopping" in found[0][2], found
    assert f"(commit {stopping[:12]})" in found[0][2], found


def test_a_step_back_past_a_hidden_night_is_measured_by_ancestry_not_commit_dates(
    tmp_path: Path,
) -> None:
    """Night 1 is stopping; night 2 merges an old branch (Status open, a colleague's clock
    ahead, so its commit is the night's newest-dated) and commits a typo; night 3's working
    tree is open. Night 2 shows no Status, so night 3 is measured from the nearest commit
    behind night 2's tree (the merge, stopping): before, the night's newest-dated commit (the
    branch's open) was taken, and the step back passed (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2026-07-01T10:00:00Z", "open the session")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-02T10:00:00Z", "start stopping")
    out = tmp_path / "out"
    _night(repo, out, 1)
    git(repo, "checkout", "-q", "-b", "feat", "HEAD~1")
    edit(repo, "thesis.md", "## Claim", "## Claim\n")
    commit(repo, "2026-07-20T10:00:00Z", "a colleague's thesis edit, clock ahead")
    git(repo, "checkout", "-q", "main")
    when = "2026-07-03T10:00:00Z"
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    git(repo, "merge", "-q", "--no-edit", "feat", env=dates)
    merge = git(repo, "rev-parse", "HEAD").strip()
    edit(repo, "state.md", "Status: stopping", "Status: stoping")
    commit(repo, "2026-07-04T10:00:00Z", "a typo")
    _night(repo, out, 2)
    edit(repo, "state.md", "Status: stoping", "Status: open")
    _night(repo, out, 3)
    found = [(p, m) for p, r, m in _series(out) if r == "BS-STATE-01"]
    assert [p for p, _ in found] == ["night-3"], found
    assert f"moved backward from stopping (commit {merge[:12]})" in found[0][1], found


@pytest.mark.parametrize("rule", ["BS-FORK-01", "BS-LEDGER-01"])
def test_an_id_gone_for_a_night_is_measured_by_ancestry_not_commit_dates(
    tmp_path: Path, rule: str
) -> None:
    """Night 2 merges an old branch whose clock ran ahead (so its commit is the night's
    newest-dated) and then hides an ID: F2 resolved by D3, whose Resolves line then goes (the
    branch still lists F2), or D2 removed (the branch rewrote it). Night 3 lists F2 again, or
    brings D2 back with the branch's text: measured from the nearest commit behind night 2's
    tree (the merge), F2 reappears and D2 is rewritten. Before, the night's newest-dated
    commit (the branch's) stood for night 2, and night 3 passed (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2026-07-01T10:00:00Z", "open the session")
    out = tmp_path / "out"
    _night(repo, out, 1)
    forks, ledger = repo / SESSION / "forks.md", repo / SESSION / "ledger.md"
    listed, kept = forks.read_text(), ledger.read_text()
    git(repo, "checkout", "-q", "-b", "feat")
    old, new = "receives each notification on its own, never nothing", "receives nothing"
    if rule == "BS-LEDGER-01":
        edit(repo, "ledger.md", old, new)
    else:
        edit(repo, "thesis.md", "## Claim", "## Claim\n")
    branch = ledger.read_text()
    commit(repo, "2026-07-20T10:00:00Z", "a colleague's commit, clock ahead")
    git(repo, "checkout", "-q", "main")
    if rule == "BS-FORK-01":
        forks.write_text(listed[: listed.index("## F2")] + listed[listed.index("## F4") :])
        resolves = "\n## D3 — The workspace clock decides\n- Decision: the workspace zone.\n"
        ledger.write_text(kept + resolves + "- Why: none on file.\n- How to apply: read it.\n")
        ledger.write_text(ledger.read_text() + "- Resolves: F2\n")
        commit(repo, "2026-07-02T10:00:00Z", "D3 resolves F2")
    when = "2026-07-03T10:00:00Z"
    dates = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    git(repo, "merge", "-q", "--no-edit", "-s", "ours", "feat", env=dates)
    merge = git(repo, "rev-parse", "HEAD").strip()
    if rule == "BS-FORK-01":
        edit(repo, "ledger.md", "- Resolves: F2\n", "")
    else:
        ledger.write_text(kept[: kept.index("## D2")])
    commit(repo, "2026-07-04T10:00:00Z", "hide the ID")
    _night(repo, out, 2)
    if rule == "BS-FORK-01":
        forks.write_text(listed)
    else:
        ledger.write_text(branch)
    _night(repo, out, 3)
    found = [m for p, r, m in _series(out) if p == "night-3" and r == rule]
    assert len(found) == 1, _series(out)
    expected = "F2 reappears after D3" if rule == "BS-FORK-01" else "D2 was rewritten between"
    assert expected in found[0] and f"commit {merge[:12]}" in found[0], found


def test_a_reused_id_is_seen_past_a_commit_that_deleted_it_in_the_same_night(
    tmp_path: Path,
) -> None:
    """One night's commits list F2, delete it, then give F2 to a new question: the reuse is
    measured from the nearest earlier commit that listed F2, and fails the night."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    listed = commit(repo, "2026-07-08T15:00:00Z", "open the session")
    forks = repo / SESSION / "forks.md"
    original = forks.read_text()
    head, f2 = original.split("## F2", 1)
    forks.write_text(head)
    commit(repo, "2026-07-09T15:00:00Z", "drop F2")
    forks.write_text(
        head + "## F2" + f2.replace("Whose clock decides the send window?", "Who pays?")
    )
    commit(repo, "2026-07-10T15:00:00Z", "a new question under F2")
    _night(repo, tmp_path / "out", 1)
    found = [(p, r, m) for p, r, m in _series(tmp_path / "out") if r == "BS-FORK-01"]
    assert len(found) == 1, found
    assert "F2 was retitled" in found[0][2] and "Who pays?" in found[0][2], found
    assert f"(commit {listed[:12]})" in found[0][2], found


F3_AGAIN = "\n## F3 — Should webhooks page too? [open]\n- Raised by: user\n- Closes when: asked\n"


def test_a_resolved_id_listed_again_after_its_resolves_line_went_is_reused(
    tmp_path: Path,
) -> None:
    """D1 resolves F3; a commit drops that Resolves line (no rule reads it away); the next lists
    F3 again for a new question. The step that lists it looked only at the commit beside it,
    which neither lists nor resolves F3, and the session was clean: it is measured from the
    nearest commit that knew F3, which resolved it."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    resolved = commit(repo, "2026-07-08T15:00:00Z", "open the session")
    edit(repo, "ledger.md", "- Resolves: F3\n", "")
    commit(repo, "2026-07-09T15:00:00Z", "drop the Resolves line")
    (repo / SESSION / "forks.md").write_text((repo / SESSION / "forks.md").read_text() + F3_AGAIN)
    commit(repo, "2026-07-10T15:00:00Z", "F3 again")
    _night(repo, tmp_path / "out", 1)
    found = [(p, r, m) for p, r, m in _series(tmp_path / "out") if r == "BS-FORK-01"]
    assert len(found) == 1, found
    assert "F3 reappears after D1 resolved it" in found[0][2], found
    assert f"(commit {resolved[:12]})" in found[0][2], found


def test_an_entry_removed_then_brought_back_rewritten_is_a_rewrite(tmp_path: Path) -> None:
    """One night's commits have D2, drop it, then bring it back with another How to apply:
    the removal fails, and so does the return, measured from the nearest commit with D2."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    had = commit(repo, "2026-07-08T15:00:00Z", "open the session")
    ledger = repo / SESSION / "ledger.md"
    original = ledger.read_text()
    ledger.write_text(original.split("## D2")[0])
    commit(repo, "2026-07-09T15:00:00Z", "drop D2")
    ledger.write_text(original.replace("two toggles", "a toggle"))
    commit(repo, "2026-07-10T15:00:00Z", "D2 again, rewritten")
    _night(repo, tmp_path / "out", 1)
    found = sorted(m for _, r, m in _series(tmp_path / "out") if r == "BS-LEDGER-01")
    assert len(found) == 2 and found[0].startswith("D2 was removed"), found
    assert found[1].startswith(f"D2 was rewritten between commit {had[:12]} and commit"), found
    assert "How to apply changed" in found[1], found


def test_an_entry_or_a_resolution_gone_for_a_night_is_remembered_when_it_returns(
    tmp_path: Path,
) -> None:
    """Night 1: D1 resolves F3 and D2 says "two toggles". Night 2: D1's Resolves line and the
    whole of D2 are gone (D2's removal fails). Night 3: F3 is listed again and D2 is back
    rewritten. Both were compared with night 2 only, which knew neither, and night 3 was clean."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    ledger = repo / SESSION / "ledger.md"
    original = ledger.read_text()
    out = tmp_path / "out"

    def night(number: int) -> None:
        crawl([str(repo.parent)], str(out), workers=1, point=f"night-{number}")
        check(str(out))

    night(1)
    ledger.write_text(original.split("## D2")[0].replace("- Resolves: F3\n", ""))
    edit(repo, "state.md", "→ D2,", "→ D1,")
    night(2)
    ledger.write_text(original.replace("- Resolves: F3\n", "").replace("two toggles", "a toggle"))
    edit(repo, "state.md", "→ D1, thesis", "→ D2, thesis")
    (repo / SESSION / "forks.md").write_text((repo / SESSION / "forks.md").read_text() + F3_AGAIN)
    night(3)
    found = sorted((p, r, m.split(" (")[0]) for p, r, m in _series(out))
    first_run = (
        connect(Out(out))
        .execute("SELECT runs[1] FROM points WHERE point = 'night-1'")
        .fetchone()[0]
    )
    assert [(p, r) for p, r, _ in found] == [
        ("night-2", "BS-LEDGER-01"),
        ("night-3", "BS-FORK-01"),
        ("night-3", "BS-LEDGER-01"),
    ], found
    assert found[0][2] == "D2 was removed"
    assert found[1][2] == "F3 reappears after D1 resolved it"
    assert found[2][2].startswith(f"D2 was rewritten between run {first_run} and run"), found


def test_a_merge_that_takes_a_counted_side_as_it_is_makes_no_step(tmp_path: Path) -> None:
    """Night 1 crawls branch b, whose commit steps Status back (a finding); meanwhile main
    commits an unrelated document. Night 2 merges b into main (--no-ff): the merge's session
    is b's as it was, yet its pair with main's side showed b's step again and failed night 2
    (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q", "-b", "main")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-08T15:00:00Z", "stopping")
    git(repo, "checkout", "-q", "-b", "b")
    edit(repo, "state.md", "Status: stopping", "Status: open")
    back = commit(repo, "2026-07-09T15:00:00Z", "back to open")
    git(repo, "checkout", "-q", "main")
    (repo / "docs" / "other.md").write_text("# Other\n")
    commit(repo, "2026-07-09T16:00:00Z", "an unrelated document")
    git(repo, "checkout", "-q", "b")
    _night(repo, tmp_path / "out", 1)
    git(repo, "checkout", "-q", "main")
    dates = {
        "GIT_AUTHOR_DATE": "2026-07-10T15:00:00Z",
        "GIT_COMMITTER_DATE": "2026-07-10T15:00:00Z",
    }
    git(repo, "merge", "-q", "--no-ff", "-m", "merge b", "b", env=dates)
    _night(repo, tmp_path / "out", 2)
    found = [(p, r, m) for p, r, m in _series(tmp_path / "out") if r == "BS-STATE-01"]
    assert [(p, r) for p, r, _ in found] == [("night-1", "BS-STATE-01")], found
    assert f"(commit {back[:12]})" in found[0][2], found


def test_a_fork_merged_in_from_the_other_side_is_no_reuse_of_one_resolved_since(
    tmp_path: Path,
) -> None:
    """Night 1: main raises F1 while a branch forked before it edits thesis.md. Night 2
    resolves F1 in the working tree. Night 3 merges the branch, then commits the resolution.
    The merge's pair with the branch's commit misses F1 there; walking the branch back found
    no commit that knew it, so night 2's tree, where D3 had resolved it, stood in: "F1
    reappears after D3 resolved it". Along ancestry F1 came in from main's side (found by a
    hunt, and in a generated week: seed 23, night 4)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q", "-b", "main")
    only_f2 = FORKS_T1.split("## F1")[0] + "## F2" + FORKS_T1.split("## F2")[1]
    (repo / SESSION / "forks.md").write_text(only_f2)
    commit(repo, "2026-07-01T10:00:00Z", "base")
    git(repo, "branch", "side")
    (repo / SESSION / "forks.md").write_text(FORKS_T1)
    commit(repo, "2026-07-02T10:00:00Z", "raise F1")
    git(repo, "checkout", "-q", "side")
    (repo / SESSION / "thesis.md").write_text(
        (repo / SESSION / "thesis.md").read_text() + "\nA side note.\n"
    )
    commit(repo, "2026-07-02T11:00:00Z", "side: a thesis note")
    git(repo, "checkout", "-q", "main")
    _night(repo, tmp_path / "out", 1)
    _resolve_f1(repo)
    _night(repo, tmp_path / "out", 2)
    dates = {
        "GIT_AUTHOR_DATE": "2026-07-04T09:00:00Z",
        "GIT_COMMITTER_DATE": "2026-07-04T09:00:00Z",
    }
    git(repo, "merge", "-q", "--no-edit", "side", env=dates)
    commit(repo, "2026-07-04T09:30:00Z", "resolve F1 by D3")
    _night(repo, tmp_path / "out", 3)
    assert [f for f in _series(tmp_path / "out") if f[1] == "BS-FORK-01"] == []


def test_a_merge_that_keeps_the_branchs_stale_state_is_a_step_back(tmp_path: Path) -> None:
    """Main moves the session to stopping; a branch forked before it rewords the Posture; the
    merge resolves state.md with the branch's copy, so HEAD is open again. The merge's files
    were the branch's, and such a merge made no pair at all: the branch never made the step,
    main's step was undone, and night 2 read clean (found by a hunt). A merge that keeps one
    side makes no step only when the other side changed nothing that side lacks."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "2026-07-01T10:00:00Z", "base")
    _night(repo, tmp_path / "out", 1)
    git(repo, "checkout", "-q", "-b", "colleague")
    edit(repo, "state.md", "- Posture:", "- Posture: reworded by a colleague;")
    commit(repo, "2026-07-02T09:00:00Z", "colleague: posture")
    git(repo, "checkout", "-q", "main")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-02T10:00:00Z", "stopping")
    dates = {
        "GIT_AUTHOR_DATE": "2026-07-03T10:00:00Z",
        "GIT_COMMITTER_DATE": "2026-07-03T10:00:00Z",
    }
    git(repo, "merge", "-q", "--no-edit", "-X", "theirs", "colleague", env=dates)
    assert "Status: open" in (repo / SESSION / "state.md").read_text()
    _night(repo, tmp_path / "out", 2)
    found = [f for f in _series(tmp_path / "out") if f[1] == "BS-STATE-01"]
    assert [(point, rule) for point, rule, _ in found] == [("night-2", "BS-STATE-01")], found
    assert "stopping" in found[0][2] and "open" in found[0][2]


def test_a_step_made_again_on_an_amended_step_counts_again(tmp_path: Path) -> None:
    """Night 2 commits a step back (counted); night 3 amends that commit (the same step shown
    again, not counted); night 4 commits stopping, then open, on top of the amended commit: a
    second step back. The original, pre-amend commit made the same step and is no ancestor,
    which dropped the new step too, so night 4 read clean (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q", "-b", "main")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    _night(repo, tmp_path / "out", 1)
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-02T10:00:00Z", "step back")
    _night(repo, tmp_path / "out", 2)
    dates = {
        "GIT_AUTHOR_DATE": "2026-07-03T10:00:00Z",
        "GIT_COMMITTER_DATE": "2026-07-03T10:00:00Z",
    }
    git(repo, "commit", "-q", "--amend", "--no-edit", env=dates)
    _night(repo, tmp_path / "out", 3)
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-04T11:00:00Z", "stopping again")
    edit(repo, "state.md", "Status: stopping", "Status: open")
    again = commit(repo, "2026-07-04T12:00:00Z", "step back again")
    _night(repo, tmp_path / "out", 4)
    found = [(p, m) for p, r, m in _series(tmp_path / "out") if r == "BS-STATE-01"]
    assert [p for p, _ in found] == ["night-2", "night-4"], found
    assert f"(commit {again[:12]})" in found[1][1]


def test_a_step_made_again_on_a_copy_amended_the_same_night_counts_again(tmp_path: Path) -> None:
    """Night 1 counts a step back; before night 2 it is amended (the same step shown again)
    and, on top of the amended commit, the session goes stopping, then open again. The amended
    copy, first seen that night too, made the step and is an ancestor of the new one: it is
    a new step. Before, only commits of earlier nights could vouch for a step made again, so
    night 2 read clean (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q", "-b", "main")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-02T10:00:00Z", "step back")
    _night(repo, tmp_path / "out", 1)
    when = "2026-07-03T10:00:00Z"
    git(repo, "commit", "-q", "--amend", "--no-edit", env={"GIT_COMMITTER_DATE": when})
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-04T11:00:00Z", "stopping again")
    edit(repo, "state.md", "Status: stopping", "Status: open")
    again = commit(repo, "2026-07-04T12:00:00Z", "step back again")
    _night(repo, tmp_path / "out", 2)
    found = [(p, m) for p, r, m in _series(tmp_path / "out") if r == "BS-STATE-01"]
    assert [p for p, _ in found] == ["night-1", "night-2"], found
    assert f"(commit {again[:12]})" in found[1][1], found


@pytest.mark.parametrize("rewrite", ["amend", "rebase"])
def test_a_second_step_back_rewritten_later_is_counted_once(tmp_path: Path, rewrite: str) -> None:
    """Night 1 steps back, night 2 goes stopping again, night 3 steps back again (counted);
    before night 4 that last commit is reworded (amend) or rebased: the same step shown again,
    a copy of night 3's. The first step back, behind the copy, made it a new step, and night 4
    failed again (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q", "-b", "main")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-02T10:00:00Z", "stopping")
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-02T11:00:00Z", "step back")
    _night(repo, tmp_path / "out", 1)
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-03T10:00:00Z", "stopping again")
    _night(repo, tmp_path / "out", 2)
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-04T10:00:00Z", "step back again")
    _night(repo, tmp_path / "out", 3)
    dates = {"GIT_COMMITTER_DATE": "2026-07-05T10:00:00Z"}
    if rewrite == "amend":
        git(repo, "commit", "-q", "--amend", "-m", "step back again, reworded", env=dates)
    else:
        git(repo, "rebase", "-q", "--force-rebase", "HEAD~1", env=dates)
    _night(repo, tmp_path / "out", 4)
    found = [p for p, r, _ in _series(tmp_path / "out") if r == "BS-STATE-01"]
    assert found == ["night-1", "night-3"], found


def test_commits_in_one_second_are_ordered_by_ancestry_for_lifetimes(tmp_path: Path) -> None:
    """Commit dates have one-second steps, so a script (or a twin) that raises a fork and
    resolves it in the next commit may date both alike. The lifetimes ordered such commits
    by their hashes: half the time the close came first and the fork read as reopened, open
    for good. Git ancestry orders them (issue 12: history goes by ancestry); the compose
    dates give the hours. Eight repositories, so that hash order would be right in all of
    them one time in 256."""
    root = tmp_path / "root"
    for i in range(8):
        repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / f"repo-{i}")
        _forks_committed(repo, "2026-07-01T10:00Z", "2026-07-05T12:00:00Z", "F1 open")
        _resolve_f1(repo)
        _set_compose(repo, "2026-07-01T16:00Z")
        commit(repo, "2026-07-05T12:00:00Z", "resolve F1, in the same second")
    out = Out(tmp_path / "out")
    crawl([str(root)], str(out.root), workers=1, git_history=True)
    rows = (
        connect(out)
        .execute(
            "SELECT repo, close_kind, censored, hours FROM fork_lifetimes WHERE fork_id = 'F1' "
            "ORDER BY repo"
        )
        .fetchall()
    )
    assert rows == [(f"repo-{i}", "resolved", False, 6.0) for i in range(8)]


def _sync_log(repo: Path) -> None:
    """The working tree's sync log (ops/ stays out of git): S2 reconciled on 2026-07-02."""
    (repo / SESSION / "ops" / "sync-log.md").write_text(
        "S1 | gate: intake | dispatched: 2026-07-01T09:10Z | scope: full\n"
        "S1 → reconciled | 2026-07-01T09:20Z | 1 edits · 3 new forks · 3 open\n"
        "S2 | gate: intake | dispatched: 2026-07-02T09:00Z | scope: full\n"
        "S2 → reconciled | 2026-07-02T09:30Z | 1 edits · 0 new forks · 3 open\n"
    )


def test_a_commit_dated_in_the_future_is_never_ordered_after_the_crawl_that_saw_it(
    tmp_path: Path,
) -> None:
    """A commit from a clock running ahead (dated 2030) sorted after every later working
    tree, so it stood as the session's latest snapshot until the clock caught up: F1, resolved
    by its child commit the next night, stayed open (in the night's longest-open forks), and
    F6, raised in the working tree since, read as vanished; on the first night, the syncs
    were unknown, as no snapshot after it had the sync log. It is ordered no later than the
    crawl that first saw it, and before its child (dated correctly, so earlier) by ancestry."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    _sync_log(repo)
    _forks_committed(
        repo, "2026-07-01T10:00Z", "2030-01-01T10:00:00Z", "F1, F2, F5 open, on a fast clock"
    )
    out = tmp_path / "out"
    _night(repo, out, 1)
    _resolve_f1(repo)
    _set_compose(repo, "2026-07-04T10:00Z")
    commit(repo, "2026-07-04T10:00:00Z", "resolve F1 after 72 h")
    forks = repo / SESSION / "forks.md"
    forks.write_text(forks.read_text() + FORKS_T1.split("## F5")[1].join(["## F6", ""]))
    _night(repo, out, 2)
    con = connect(Out(out))
    # On the first night the working tree is the latest snapshot, so its sync log counts S2.
    assert con.execute(
        "SELECT syncs FROM fork_lifetimes_at('night-1') WHERE fork_id = 'F1'"
    ).fetchall() == [(1,)]
    rows = con.execute(
        "SELECT fork_id, close_kind, censored, vanished, hours, syncs "
        "FROM fork_lifetimes_at('night-2') ORDER BY fork_id"
    ).fetchall()
    # F2 and F5 are censored at the working tree's content time (its newest capture turn).
    assert rows == [
        ("F1", "resolved", False, False, 72.0, 1),
        ("F2", None, True, False, 172.3, 1),
        ("F3", "resolved", False, False, None, None),
        ("F5", None, True, False, 172.3, 1),
        ("F6", None, True, False, 0.0, 0),
    ]
    frozen = con.execute(
        "SELECT fork_id FROM longest_open WHERE point = 'night-2' ORDER BY fork_id"
    ).fetchall()
    assert frozen == [("F2",), ("F5",), ("F6",)]


def test_a_series_with_a_commit_dated_in_the_future_is_carried_on_an_unchanged_night(
    tmp_path: Path,
) -> None:
    """Check carries a series' fork lifetimes over a night that saw it unchanged, from its
    latest observation; a commit dated 2030 stood as that latest until 2030, so the series was
    computed again every night (the same figures, slower). Its time is no later than the run
    that saw it, as the lifetimes order it, so from the second night on it is carried."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, "2030-01-01T10:00:00Z", "on a fast clock")
    out = tmp_path / "out"
    for night in (1, 2, 3):
        _night(repo, out, night)
    con = connect(Out(out))
    last = con.execute(
        "SELECT last_at FROM lifetime_forks WHERE point = 'night-3' AND fork_id IS NULL"
    ).fetchall()
    started = con.execute("SELECT started_at FROM run_points WHERE point = 'night-3'").fetchall()
    assert last == started
    # The carried figures are the ones computed afresh: the same forks, the same lifetimes.
    nights = [compute(str(out), run=f"night-{n}").as_json()["fork_lifetimes"] for n in (1, 3)]
    assert nights[0] == nights[1]


def test_a_content_time_from_a_clock_running_ahead_is_no_later_than_the_crawl_that_read_it(
    tmp_path: Path,
) -> None:
    """A twin on a fast clock writes Last compose 2030: F1, raised on 2026-07-01 and still
    open, was censored at that content time, open for three and a half years at a night
    checked in 2026 (the longest-open fork), and a fork raised in it and resolved later with
    the right clock closed before it was raised (no lifetime). What a crawl read was written
    before the crawl ended, so a content time is never later than the first crawl that read
    it."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    _forks_committed(repo, "2026-07-01T10:00Z", "2026-07-01T10:00:00Z", "F1, F2, F5 open")
    _set_compose(repo, "2030-01-01T10:00Z")
    out = tmp_path / "out"
    _night(repo, out, 1)
    con = connect(Out(out))
    read_by = con.execute("SELECT max(finished_at) FROM runs").fetchone()[0]
    bound = (read_by - datetime(2026, 7, 1, 10, tzinfo=UTC)).total_seconds() / 3600
    censored = con.execute(
        "SELECT max(censored_at), max(hours) FROM fork_lifetimes_at('night-1') WHERE censored"
    ).fetchone()
    assert censored == (read_by, pytest.approx(bound, abs=0.1))
    frozen = con.execute("SELECT max(hours) FROM longest_open WHERE point = 'night-1'").fetchone()
    assert frozen == (pytest.approx(bound, abs=0.1),)


def test_a_sync_dispatched_by_a_clock_running_ahead_raises_no_later_than_the_crawl(
    tmp_path: Path,
) -> None:
    """A twin on a fast clock dispatches S3 in 2030 and raises F6 by it; F6 is resolved after
    the first night, with the right clock. Its raise was the dispatch time as written (2030):
    it closed 'before its raise' and had no lifetime, nor syncs. A dispatch time is a content
    time: no later than the end of the first crawl that read it, like the rest."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    (repo / SESSION / "forks.md").write_text(
        FORKS_T1 + "\n## F6 — Do digests keep quiet hours? [open]\n"
        "- Raised by: twin (S3)\n- Closes when: a yes/no\n"
    )
    log = repo / SESSION / "ops" / "sync-log.md"
    log.write_text(
        log.read_text() + "S3 | gate: on-demand | dispatched: 2030-01-01T10:00Z | scope: full\n"
        "S3 → reconciled | 2030-01-01T10:05Z | 1 edits · 1 new forks · 3 open\n"
    )
    commit(repo, datetime.now(UTC).isoformat(timespec="seconds"), "F6 raised by S3")
    out = tmp_path / "out"
    _night(repo, out, 1)
    text = (repo / SESSION / "forks.md").read_text()
    (repo / SESSION / "forks.md").write_text(text.split("\n## F6")[0] + "\n")
    ledger = repo / SESSION / "ledger.md"
    ledger.write_text(
        ledger.read_text() + "\n## D3 — Digests keep quiet hours\n- Decision: yes.\n"
        "- Why: asked.\n- How to apply: check them.\n- Resolves: F6\n"
    )
    time.sleep(1.1)
    resolved = datetime.now(UTC).replace(microsecond=0)
    _set_compose(repo, resolved.strftime("%Y-%m-%dT%H:%M:%SZ"))
    commit(repo, datetime.now(UTC).isoformat(timespec="seconds"), "F6 resolved")
    _night(repo, out, 2)
    con = connect(Out(out))
    read_by = con.execute("SELECT finished_at FROM run_points WHERE point = 'night-1'").fetchone()[
        0
    ]
    row = con.execute(
        "SELECT raised_at, closed_at, close_kind, hours FROM fork_lifetimes_at('night-2') "
        "WHERE fork_id = 'F6'"
    ).fetchone()
    assert row[:3] == (read_by, resolved, "resolved")
    assert row[3] == pytest.approx((resolved - read_by).total_seconds() / 3600, abs=1e-6)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def test_a_night_without_a_working_tree_stands_at_its_last_commit_by_ancestry(
    tmp_path: Path,
) -> None:
    """Night 2 saw the session only in commits (its folder deleted before the night): one
    dated 2030 by a clock running ahead showing `open`, then its child `stopping`. Restored with
    a typo (`opne`) and then set to `open`, the session is measured from night 2, whose last
    Status was read by commit date: the 2030 `open`, and the step back passed. That night's
    commits stand in ancestry order, as a night's working tree does."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, _now(), "open")
    out = tmp_path / "out"
    _night(repo, out, 1)
    edit(repo, "state.md", "Posture: probing", "Posture: still probing")
    commit(repo, "2030-01-01T00:00:00Z", "open, on a clock running ahead")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, _now(), "stopping")
    kept = tmp_path / "kept"
    shutil.move(repo / SESSION, kept)
    commit(repo, _now(), "folder deleted")
    _night(repo, out, 2)
    shutil.move(kept, repo / SESSION)
    edit(repo, "state.md", "Status: stopping", "Status: opne")
    commit(repo, _now(), "restored, with a typo")
    _night(repo, out, 3)
    edit(repo, "state.md", "Status: opne", "Status: open")
    commit(repo, _now(), "open again")
    _night(repo, out, 4)
    found = [(p, r, m.split(" (")[0]) for p, r, m in _series(out)]
    assert ("night-4", "BS-STATE-01", "Status moved backward from stopping") in found


def test_a_fork_resolved_on_a_night_without_a_working_tree_reappears_by_ancestry(
    tmp_path: Path,
) -> None:
    """Night 2 saw the session only in commits: F1 listed in one dated 2030 by a clock running
    ahead, then resolved by D3 in its child. Restored without F1 or D3, and F1 then listed
    again, the session was measured from night 2's latest dated commit, which listed F1 under
    its own title: the reuse passed. That night's commits stand in ancestry order."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    commit(repo, _now(), "open")
    forks = (repo / SESSION / "forks.md").read_text()
    ledger = (repo / SESSION / "ledger.md").read_text()
    out = tmp_path / "out"
    _night(repo, out, 1)
    edit(repo, "state.md", "Posture: probing", "Posture: still probing")
    commit(repo, "2030-01-01T00:00:00Z", "F1 listed, on a clock running ahead")
    _resolve_f1(repo)
    commit(repo, _now(), "D3 resolves F1")
    kept = tmp_path / "kept"
    shutil.move(repo / SESSION, kept)
    commit(repo, _now(), "folder deleted")
    _night(repo, out, 2)
    shutil.move(kept, repo / SESSION)
    (repo / SESSION / "ledger.md").write_text(ledger)
    commit(repo, _now(), "restored without F1 or D3")
    _night(repo, out, 3)
    (repo / SESSION / "forks.md").write_text(forks)
    commit(repo, _now(), "F1 listed again")
    _night(repo, out, 4)
    found = [(p, r) for p, r, m in _series(out) if "F1" in m]
    assert ("night-4", "BS-FORK-01") in found


def test_a_session_gone_by_the_night_is_idle_until_the_run_not_its_commit_date(
    tmp_path: Path,
) -> None:
    """A step back committed on a clock running ahead (dated 2030), then the folder deleted:
    the session takes part in the night at that commit, whose date stood for the run's time,
    so it read idle for three and a half years. Idle is the run's time minus the content time
    (spec §7)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, _now(), "stopping")
    out = tmp_path / "out"
    _night(repo, out, 1)
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2030-01-01T00:00:00Z", "back to open, on a clock running ahead")
    shutil.rmtree(repo / SESSION)
    commit(repo, _now(), "folder deleted")
    _night(repo, out, 2)
    con = connect(Out(out))
    assert con.execute(
        "SELECT count(*) FROM point_sessions WHERE point = 'night-2'"
    ).fetchone() == (1,)
    started = con.execute("SELECT started_at FROM run_points WHERE point = 'night-2'").fetchone()[0]
    composed = datetime(2026, 7, 8, 14, 30, tzinfo=UTC)
    idle = compute(str(out), run="night-2").idle[0]
    assert idle.idle_max_hours == pytest.approx((started - composed).total_seconds() / 3600)


def _two_checkouts(root: Path) -> Path:
    """Under root, main-checkout and release-checkout: two clones of one origin holding one
    session (stopping), each with one commit."""
    for name in ("main-checkout", "release-checkout"):
        repo = copy_tree(FIXTURES / "cases" / "base" / "converging" / "repo", root / name)
        git(repo, "init", "-q")
        git(repo, "remote", "add", "origin", "https://example.invalid/team/one.git")
        commit(repo, "2026-07-08T15:00:00Z", "the session")
    return root


@pytest.mark.parametrize("order", ["main-first", "release-first"])
def test_two_checkouts_of_one_repository_are_one_session_read_from_the_first_by_path(
    tmp_path: Path, order: str
) -> None:
    """Two checkouts with one origin under a root are one repository identity, so one
    session key in two folders. The first checkout by path stands for it, a choice content
    cannot flip; an unchanged second night finds no step between the two folders (it found
    'Status moved backward' when the night before had been read from the other one), and the
    crawl says what it counted."""
    root = _two_checkouts(tmp_path / "root")
    # The two differ; which snapshot id sorts first decides nothing.
    other = "release-checkout" if order == "main-first" else "main-checkout"
    edit(root / other, "state.md", "Status: stopping", "Status: open")
    out = Out(tmp_path / "out")
    nights = [crawl([str(root)], str(out.root), workers=1, point=f"n{i}") for i in (1, 2)]
    assert all(
        any(
            "main-checkout, release-checkout are checkouts of one repository" in w
            for w in night.warnings
        )
        for night in nights
    )
    check(str(out.root))
    con = connect(out)
    assert con.execute("SELECT count(*) FROM series_findings").fetchone() == (0,)
    chosen = con.execute("SELECT point, repo_path FROM point_sessions ORDER BY point").fetchall()
    assert chosen == [("n1", "main-checkout"), ("n2", "main-checkout")]


def _one_origin_checkouts(root: Path) -> tuple[Path, Path]:
    """Under root, a-checkout (first by path: it stands for the session) and b-checkout: two
    clones of one origin holding one session."""
    first = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "a-checkout")
    git(first, "init", "-q")
    git(first, "remote", "add", "origin", "https://example.invalid/team/one.git")
    commit(first, "2026-07-01T10:00:00Z", "the session")
    second = root / "b-checkout"
    git(root, "clone", "-q", str(first), str(second))
    git(second, "remote", "set-url", "origin", "https://example.invalid/team/one.git")
    return first, second


def test_a_second_checkout_does_not_stand_in_for_a_status_the_first_hid(tmp_path: Path) -> None:
    """The checkout that stands for the session went stopping, `stoping`, open: a step back
    from stopping on night 3. Measured from the last point that showed a Status, night 2, the
    other checkout's `open` was read there, and the step passed (found by a hunt)."""
    first, _ = _one_origin_checkouts(tmp_path / "root")
    out = tmp_path / "out"
    for night, status in enumerate(("stopping", "stoping", "open"), start=1):
        path = first / SESSION / "state.md"
        path.write_text(re.sub(r"Status: \w+", f"Status: {status}", path.read_text()))
        _night(first, out, night)
    found = _series(out)
    assert [(p, r) for p, r, _ in found] == [("night-3", "BS-STATE-01")]
    assert "moved backward from stopping" in found[0][2]


def test_a_second_checkout_does_not_stand_in_for_an_entry_the_first_removed(
    tmp_path: Path,
) -> None:
    """D2 removed in the standing checkout, then brought back with the other checkout's Why:
    a rewrite of the D2 it had. The entry was measured from the other checkout's D2 (the last
    point that knew it, night 2), and the rewrite passed (found by a hunt)."""
    first, second = _one_origin_checkouts(tmp_path / "root")
    ours, theirs = "silence is the failure mode", "silence is the worst failure mode"
    ledger = second / SESSION / "ledger.md"
    ledger.write_text(ledger.read_text().replace(ours, theirs))
    out = tmp_path / "out"
    _night(first, out, 1)
    path = first / SESSION / "ledger.md"
    text = path.read_text()
    cut = text.index("## D2")
    path.write_text(text[:cut])
    _night(first, out, 2)
    path.write_text(text[:cut] + text[cut:].replace(ours, theirs))
    _night(first, out, 3)
    found = [(p, r) for p, r, m in _series(out) if "rewritten" in m or "removed" in m]
    assert found == [("night-2", "BS-LEDGER-01"), ("night-3", "BS-LEDGER-01")]


def test_a_stale_history_copy_does_not_stand_in_for_a_status_the_research_folder_hid(
    tmp_path: Path,
) -> None:
    """A move half done: a harvested copy under docs/history/ beside the research folder, which
    stands for the session and goes open, `opne` (committed), open. Nothing stepped back; the
    copy's `harvested`, read as the last Status shown, made it a step back from harvested
    (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    copy = repo / "docs/history/brainstorms/demo"
    shutil.copytree(repo / SESSION, copy, ignore=shutil.ignore_patterns("ops"))
    (copy / "state.md").write_text(
        (copy / "state.md").read_text().replace("Status: open", "Status: harvested")
    )
    git(repo, "init", "-q")
    commit(repo, "2026-07-01T10:00:00Z", "a copy in history")
    out = tmp_path / "out"
    _night(repo, out, 1)
    edit(repo, "state.md", "Status: open", "Status: opne")
    commit(repo, "2026-07-02T10:00:00Z", "a typo")
    _night(repo, out, 2)
    edit(repo, "state.md", "Status: opne", "Status: open")
    _night(repo, out, 3)
    assert _series(out) == []


@pytest.mark.slow
def test_a_commit_holding_both_folders_stands_as_its_research_folder(tmp_path: Path) -> None:
    """A harvest kept as a copy: every commit holds the topic under docs/research/ (Status
    stopping) and docs/history/ (harvested). Each commit node took one folder or the other as
    rows happened to come (over 150 commits, 34 took history), and a "Status moved backward
    from harvested to stopping" was found though neither folder's Status changed. Like a
    working node, a commit node stands as its research folder."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "applied" / "repo", tmp_path / "root" / "repo")
    harvested = FIXTURES / "cases" / "base" / "harvested" / "repo" / "docs" / "history"
    copy_tree(harvested, repo / "docs" / "history")
    git(repo, "init", "-q")
    commit(repo, "2026-07-01T10:00:00Z", "both folders")
    thesis = [repo / SESSION / "thesis.md", repo / "docs/history/brainstorms/demo/thesis.md"]
    for i in range(1, 151):
        for path in thesis:
            path.write_text(path.read_text() + f"line {i}\n")
        commit(repo, f"2026-07-02T10:{i // 60:02d}:{i % 60:02d}Z", f"c{i}")
    out = str(tmp_path / "out")
    crawl([str(tmp_path / "root")], out, git_history=True, workers=1, point="night-1")
    check(out)
    con = connect(Out(out))
    nodes = con.execute(
        "SELECT location, count(*) FROM commit_nodes_in(0, 1) GROUP BY ALL"
    ).fetchall()
    assert nodes == [("research", 151)]
    assert con.execute("SELECT count(*) FROM series_findings").fetchone() == (0,)


F1_HEADING = "## F1 — Do security alerts ever ride in a digest? [open]"


@pytest.mark.parametrize(
    ("first", "then", "findings"),
    [
        # The marker before the question: the question is the title.
        (
            "## F1 — [open] Do security alerts ever ride in a digest?",
            "## F1 — [open] Who pays for the digest?",
            1,
        ),
        (
            "## F1 [parked → docs/x.md] Do security alerts ever ride in a digest?",
            "## F1 [parked → docs/x.md] Who pays for the digest?",
            1,
        ),
        ("## F1 — **[open]** — Do security alerts ride?", "## F1 — **[open]** — Who pays?", 1),
        # The controls: the same question with another marker, and a remark alone, are no retitle.
        (
            "## F1 — [open] Do security alerts ever ride in a digest?",
            "## F1 — [parked → docs/x.md] Do security alerts ever ride in a digest?",
            0,
        ),
        ("## F1 [open] (raised T4)", "## F1 [open] (raised T4, kept at S2)", 0),
    ],
)
def test_a_question_after_its_marker_is_the_forks_title(
    first: str, then: str, findings: int, tmp_path: Path
) -> None:
    """Found by a hunt: a fork heading with its marker before its question (`## F1 — [open]
    Who pays?`) was read with the title '', so the question could be replaced under the same
    ID and BS-FORK-01 passed along the session's history."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    out = str(tmp_path / "out")
    edit(repo, "forks.md", F1_HEADING, first)
    crawl([str(tmp_path / "root")], out, workers=1, point="n1")
    edit(repo, "forks.md", first, then)
    crawl([str(tmp_path / "root")], out, workers=1, point="n2")
    check(out)
    found = connect(Out(out)).execute("SELECT message FROM series_findings").fetchall()
    assert len(found) == findings, found
    if findings:
        assert found[0][0].startswith("F1 was retitled: 'Do security alerts"), found


@pytest.mark.parametrize(
    ("file", "old", "new", "findings"),
    [
        # A reversal note inside the Decision line is an annotation, as on its own line.
        (
            "ledger.md",
            "anything marked urgent sends at once.",
            "anything marked urgent sends at once. Reversed by D2.",
            0,
        ),
        (
            "ledger.md",
            "anything marked urgent sends at once.",
            "anything marked urgent sends at once. _(Reversed by: D2)_",
            0,
        ),
        # White space the page shows as one space is no retitle or rewrite.
        ("forks.md", "## F1 — Do security alerts ever", "## F1 — Do  security alerts  ever", 0),
        ("ledger.md", "- Decision: comments, mentions", "- Decision: comments,   mentions", 0),
        # Emphasis put on a word shows the same words: no retitle or rewrite.
        ("forks.md", "## F1 — Do security alerts ever", "## F1 — Do **security** alerts ever", 0),
        ("ledger.md", "anything marked urgent sends", "anything marked _urgent_ sends", 0),
        # So does a code span (found by a hunt: it was a retitle and a rewrite).
        ("forks.md", "## F1 — Do security alerts ever", "## F1 — Do `security` alerts ever", 0),
        ("ledger.md", "anything marked urgent sends", "anything marked `urgent` sends", 0),
        # An underscore inside a word is a character, not emphasis: removing it is a rewrite.
        ("ledger.md", "anything marked urgent sends", "anything marked urgent_sends", 1),
        # The controls: a word changed is a rewrite and a retitle.
        ("ledger.md", "anything marked urgent sends at once.", "anything urgent waits.", 1),
        ("forks.md", "## F1 — Do security alerts ever", "## F1 — Do safety alerts ever", 1),
    ],
)
def test_what_the_page_shows_the_same_is_no_rewrite(
    file: str, old: str, new: str, findings: int, tmp_path: Path
) -> None:
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    out = str(tmp_path / "out")
    crawl([str(tmp_path / "root")], out, workers=1, point="n1")
    edit(repo, file, old, new)
    crawl([str(tmp_path / "root")], out, workers=1, point="n2")
    check(out)
    found = connect(Out(out)).execute("SELECT message FROM series_findings").fetchall()
    assert len(found) == findings, found


def _step_back_twice(tmp_path: Path, origin: str | None = None) -> tuple[Path, Path]:
    """A session that stepped back (stopping → open) in a commit of night 1 (its repository
    given `origin`, if any)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    if origin is not None:
        git(repo, "remote", "add", "origin", origin)
    (repo / "README.md").write_text("# Notifications\n")
    commit(repo, "2026-07-01T09:00:00Z", "base")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-02T10:00:00Z", "back to open")
    out = tmp_path / "out"
    _night(repo, out, 1)
    return repo, out


def test_a_rebased_step_back_is_counted_on_the_night_it_was_first_seen(tmp_path: Path) -> None:
    """`git pull --rebase` rewrote the two commits onto a teammate's: the same step, from the
    same files to the same files, came back as new commits and failed night 2 as well."""
    repo, out = _step_back_twice(tmp_path)
    git(repo, "checkout", "-q", "-b", "up", "HEAD~2")
    (repo / "README.md").write_text("# Notifications\n\nA teammate's line.\n")
    commit(repo, "2026-07-02T12:00:00Z", "teammate")
    git(repo, "checkout", "-q", "main")
    git(repo, "rebase", "-q", "up", env={"GIT_COMMITTER_DATE": "2026-07-03T09:00:00Z"})
    _night(repo, out, 2)
    _night(repo, out, 3)
    assert [(p, r) for p, r, _ in _series(out)] == [("night-1", "BS-STATE-01")]


def test_the_same_step_back_made_again_counts_again(tmp_path: Path) -> None:
    """Guard: stepping back a second time, to the very same files, is a new step (the first
    is among its ancestors), not a rewrite of the first."""
    repo, out = _step_back_twice(tmp_path)
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-03T10:00:00Z", "stopping again")
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-04T10:00:00Z", "back to open again")
    _night(repo, out, 2)
    assert [(p, r) for p, r, _ in _series(out)] == [
        ("night-1", "BS-STATE-01"),
        ("night-2", "BS-STATE-01"),
    ]


def test_an_origin_added_reads_the_history_again_for_the_new_series(tmp_path: Path) -> None:
    """An origin added with HEAD unchanged starts new series (spec §2), found by a hunt: the
    HEAD cache, keyed by root and path, skipped the walk, so the new series had no commit that
    night, and the old step back failed a later night that only edited a fragment."""
    repo, out = _step_back_twice(tmp_path)
    git(repo, "remote", "add", "origin", "https://example.invalid/team/repo.git")
    _night(repo, out, 2)
    (repo / SESSION / "fragments" / "late.md").write_text("# Late\n")
    commit(repo, "2026-07-04T10:00:00Z", "a fragment")
    _night(repo, out, 3)
    assert [(p, r) for p, r, _ in _series(out)] == [
        ("night-1", "BS-STATE-01"),
        ("night-2", "BS-STATE-01"),  # the new series' own history, read the night it began
    ]
    nodes = connect(Out(out)).execute(
        "SELECT r.point, count(*) FROM observations o JOIN runs r USING (run_id) "
        "WHERE o.commit IS NOT NULL GROUP BY 1 ORDER BY 1"
    )
    assert nodes.fetchall() == [("night-1", 3), ("night-2", 3), ("night-3", 1)]


def test_an_origin_respelt_keeps_its_series_and_another_remote_starts_new_ones(
    tmp_path: Path,
) -> None:
    """The origin respelt between nights (https → scp-like ssh, `.git` dropped) names the same
    remote: the sessions keep their keys and their first spelling, and night 1's step back is
    not found again. It was: the new spelling started new series and read their history
    again, so night 2 failed BS-STATE-01 for the same two commits (found by a hunt)."""
    repo, out = _step_back_twice(tmp_path, "https://example.invalid/team/repo.git")
    git(repo, "remote", "set-url", "origin", "git@Example.invalid:team/repo")
    _night(repo, out, 2)
    assert [(p, r) for p, r, _ in _series(out)] == [("night-1", "BS-STATE-01")]
    seen = connect(Out(out)).execute("SELECT DISTINCT session_key, repo FROM observations")
    assert [r[1] for r in seen.fetchall()] == ["https://example.invalid/team/repo.git"]
    # Another remote is another repository: new series, whose history is read and fails.
    git(repo, "remote", "set-url", "origin", "https://example.invalid/team/fork.git")
    _night(repo, out, 3)
    assert [(p, r) for p, r, _ in _series(out)] == [
        ("night-1", "BS-STATE-01"),
        ("night-3", "BS-STATE-01"),
    ]


def test_a_dropped_partial_night_has_its_commits_read_again(tmp_path: Path) -> None:
    """Night 2 got only the shard holding the session, and read a step back and forth in two
    commits; night 3 got both shards, so night 2 could only be dropped, as check says. The
    commits were stored at night 2 alone and never judged: the prune made every later crawl
    skip them, and the step was lost for good. Night 3, the first kept night whose crawl saw
    them, now holds them and fails (until stop 54 the next crawl read them again and night 4
    failed, a night late: night 3 was frozen clean with the step in its HEAD; found by a
    hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    out = tmp_path / "out"
    _night(repo, out, 1)
    key = connect(Out(out)).execute("SELECT any_value(session_key) FROM observations").fetchone()
    mine = 1 if in_shard(key[0], (1, 2)) else 2
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-02T10:00:00Z", "back to open")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-02T11:00:00Z", "stopping again")
    age(repo.parent)  # as on a real night: each shard's crawl memoises the unchanged tree

    def crawl_shards(point: str, shards: list[int]) -> None:
        for k in shards:
            crawl([str(repo.parent)], str(out), git_history=True, point=point, shard=(k, 2))

    crawl_shards("night-2", [mine])
    crawl_shards("night-3", [1, 2])
    with pytest.raises(UsageError, match="drop it with census prune --point night-2"):
        check(str(out))
    prune(str(out), point="night-2")
    check(str(out))
    assert [(p, r) for p, r, _ in _series(out)] == [("night-3", "BS-STATE-01")]
    crawl_shards("night-4", [1, 2])
    check(str(out))
    crawl_shards("night-5", [1, 2])
    check(str(out))
    found = _series(out)
    assert [(p, r) for p, r, _ in found] == [("night-3", "BS-STATE-01")]
    assert "moved backward from stopping" in found[0][2]


def test_a_recheck_under_the_same_rules_keeps_what_a_prune_left_of_the_history(
    tmp_path: Path,
) -> None:
    """Night 4's step back from stopping (nights 1–2) to open is measured past night 3's typo;
    after a prune keeps nights 3 and 4 only, a recheck with the rules unchanged recomputed
    night 4 from the history left and silently made it clean. A checked night's findings are
    facts: under the rule set they were found with, a recheck keeps them."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    out = tmp_path / "out"
    _night(repo, out, 1)
    _night(repo, out, 2)
    edit(repo, "state.md", "Status: stopping", "Status: stoping")
    _night(repo, out, 3)
    edit(repo, "state.md", "Status: stoping", "Status: open")
    _night(repo, out, 4)
    assert [(p, r) for p, r, _ in _series(out)] == [("night-4", "BS-STATE-01")]
    night_four = _night_rates(out, 4)
    prune(str(out), keep_last=2)
    assert _night_rates(out, 4) == night_four
    summary = check(str(out), recheck=True)
    assert summary.points == ["night-3", "night-4"] and summary.series_findings == 1
    found = (
        connect(Out(out))
        .execute("SELECT point, rule_id, message FROM point_series_findings")
        .fetchall()
    )
    assert [(p, r) for p, r, _ in found] == [("night-4", "BS-STATE-01")]
    assert "moved backward from stopping" in found[0][2]
    assert _night_rates(out, 4) == night_four


def test_a_prune_leaves_the_report_s_longest_open_forks_as_check_ranked_them(
    tmp_path: Path,
) -> None:
    """The report ranked a kept night's longest-open forks by hours it counted live: after a
    prune of the night that first saw the commit raising them, their raise was no longer in
    the history, and the list changed (found by a hunt). It lists check's frozen rows, in
    their rank, with their hours."""
    from pipeline.report import _histories
    from pipeline.select import all_points

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    _forks_committed(repo, "2026-01-01T10:00Z", "2026-01-01T10:00:00Z", "F1, F2, F5 open")
    out = tmp_path / "out"
    _night(repo, out, 1)
    _night(repo, out, 2)

    def listed() -> list[tuple[object, ...]]:
        con = connect(Out(out))
        point = next(p for p in all_points(con) if p.name == "night-2")
        con.close()
        _, rows, _ = _histories(Out(out), point, None, set())
        return [(r["fork_id"], r["hours"]) for r in rows]

    before = listed()
    assert before and all(hours and hours > 24 * 50 for _, hours in before), before
    prune(str(out), keep_last=1)
    assert listed() == before


def test_a_census_upgrade_that_reads_a_title_otherwise_finds_no_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new census reads the same files otherwise (its READER_VERSION differs; the old one
    kept `&mdash;` in a fork's title): the night after the upgrade compares the same files,
    so it finds no step that is only the readers'. A real retitle the next night counts."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    forks = repo / SESSION / "forks.md"
    forks.write_text(forks.read_text() + "\n## F9 &mdash; Unrelated [open]\n- Raised by: user\n")
    out = tmp_path / "out"
    with monkeypatch.context() as old:
        for module in ("pipeline.crawl", "pipeline.parse.session"):
            old.setattr(f"{module}.READER_VERSION", "an older census")
        for module in ("pipeline.parse.forks", "pipeline.parse.reading"):
            old.setattr(f"{module}.decoded_separator", lambda text: text)
        _night(repo, out, 1)
    _night(repo, out, 2)
    forks.write_text(forks.read_text().replace("Unrelated", "Retitled"))
    _night(repo, out, 3)
    assert [(point, rule) for point, rule, _ in _series(out)] == [("night-3", "BS-FORK-01")]


def test_a_night_that_loses_the_folder_it_stood_as_compares_with_it(tmp_path: Path) -> None:
    """Night 1 sees one session in two checkouts and stands it as the first by path
    (stopping); night 2 sees only the other, unchanged (open). The step back is between the
    folder night 1 stood as and the one night 2 sees, though night 2's tree is a snapshot night
    1 also saw: check's look at the series that moved (CHANGED_SERIES) counts a night whose
    session was more than one tree as moved."""
    root = _two_checkouts(tmp_path / "root")
    edit(root / "release-checkout", "state.md", "Status: stopping", "Status: open")
    out = tmp_path / "out"
    crawl([str(root)], str(out), workers=1, point="night-1")
    check(str(out))
    shutil.rmtree(root / "main-checkout")
    crawl([str(root)], str(out), workers=1, point="night-2")
    check(str(out))
    found = _series(out)
    assert [(p, r) for p, r, _ in found] == [("night-2", "BS-STATE-01")], found
    assert "from stopping" in found[0][2] and "to open" in found[0][2], found[0][2]


@pytest.mark.parametrize("odd", ["notes\x01old.md", "notes\x01 old.md", "\x01abc 1 2"])
def test_a_name_holding_byte_0x01_leaves_the_history_whole(
    history: tuple[Path, dict[str, str]], tmp_path: Path, odd: str
) -> None:
    """A committed name may hold any byte but NUL. Before, `git log` output was split on 0x01:
    a name holding it stopped the crawl with "internal error: ValueError", or (`\\x01 old.md`)
    dropped the history with the false "commit  has a date git cannot give as a time"; and the
    ops/ files a nested working tree tracked were paired with the wrong commit (found by a
    hunt)."""
    from pipeline.sources.git import GitRepo

    repo, shas = history
    (repo / "docs" / odd).write_text("a note\n")
    (repo / SESSION / "ops" / odd).write_text("tracked\n")
    git(repo, "add", "-f", f"docs/{odd}", f"{SESSION}/ops/{odd}")
    shas["odd"] = commit(repo, "2026-07-13T15:00:00Z", "an odd name")
    out = Out(tmp_path / "out")
    crawl([str(repo.parent)], str(out.root), workers=1, git_history=True)
    check(str(out.root))
    con = connect(out)
    assert con.execute("SELECT count(*) FROM parse_issues").fetchone() == (0,)
    commits = con.execute('SELECT "commit" FROM observations WHERE "commit" IS NOT NULL')
    assert {sha for (sha,) in commits.fetchall()} == set(shas.values())
    rules = con.execute("SELECT DISTINCT rule_id FROM series_findings").fetchall()
    assert sorted(rules) == [("BS-FORK-01",), ("BS-LEDGER-01",), ("BS-STATE-01",)]
    first = dict(GitRepo(str(repo)).first_changes(f"{SESSION}/ops") or [])
    assert first == {"capture.md": shas["ops"], odd: shas["odd"]}


@pytest.mark.parametrize("gone", ["deleted", "renamed"])
def test_a_step_back_in_a_folder_gone_by_the_night_fails_that_night(
    tmp_path: Path, gone: str
) -> None:
    """Status stepped back (committed), then the folder deleted or the topic renamed before
    the night: the series finding is the night's (issue 12), so the session takes part in that
    night at its last commit and fails it, in the rates, verdicts, findings and alarms; it is
    not part of later nights, and a folder deleted with no finding stays out as before."""
    sessions = [f"docs/research/t{i}-brainstorm" for i in range(12)]
    plain = "docs/research/plain-brainstorm"
    repo = tmp_path / "root" / "repo"
    copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", repo)
    git(repo, "init", "-q")
    for folder in [*sessions, plain]:
        shutil.copytree(repo / SESSION, repo / folder)
    for folder in sessions:
        state = repo / folder / "state.md"
        state.write_text(state.read_text().replace("Status: open", "Status: stopping"))
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    out = tmp_path / "out"
    _night(repo, out, 1)
    for folder in sessions:
        state = repo / folder / "state.md"
        state.write_text(state.read_text().replace("Status: stopping", "Status: open"))
    commit(repo, "2026-07-02T10:00:00Z", "back to open")
    for folder in [*sessions, plain]:
        if gone == "renamed" and folder != plain:
            git(repo, "mv", folder, folder.replace("/t", "/renamed-t"))
        else:
            shutil.rmtree(repo / folder)
    commit(repo, "2026-07-02T11:00:00Z", f"{gone}")
    crawl([str(repo.parent)], str(out), workers=1, git_history=True, point="night-2")
    checked = runner.invoke(app, ["check", "--out", str(out), "--fail-on-regression"])
    assert checked.exit_code == 1, checked.output
    assert "regressed since night-1: BS-STATE-01" in checked.output
    con = connect(Out(out))
    topics = "SELECT topic FROM point_sessions WHERE point = ? ORDER BY topic"
    renamed = [f"renamed-t{i}" for i in range(12)] if gone == "renamed" else []
    night2 = sorted(["demo", *renamed, *(f"t{i}" for i in range(12))])
    assert [t for (t,) in con.execute(topics, ["night-2"]).fetchall()] == night2
    rates = "SELECT failed, evaluated FROM rule_rates WHERE point = ? AND rule_id = 'BS-STATE-01'"
    assert con.execute(rates, ["night-2"]).fetchall() == [(12, len(night2))]
    verdicts = con.execute(
        "SELECT count(*) FILTER (WHERE NOT clean) FROM sessions WHERE point = 'night-2'"
    ).fetchone()
    assert verdicts == (12,)
    found = "SELECT count(*) FROM findings WHERE point = 'night-2' AND source = 'history'"
    assert con.execute(found).fetchone() == (12,)
    # Its forks are not the night's lifetimes: those read crawled history alone, never which
    # rules failed (docs/time-model.md), so the frozen figures count the demo's forks only.
    forks = "SELECT DISTINCT topic FROM fork_lifetimes_at('night-2') ORDER BY topic"
    assert [t for (t,) in con.execute(forks).fetchall()] == sorted(["demo", *renamed])
    frozen = compute(str(out), run="night-2").fork_lifetimes.overall.forks
    assert frozen == con.execute("SELECT count(*) FROM fork_lifetimes_at('night-2')").fetchone()[0]
    before = _night_rates(out, 2)
    _night(repo, out, 3)
    con = connect(Out(out))
    assert [t for (t,) in con.execute(topics, ["night-3"]).fetchall()] == sorted(["demo", *renamed])
    assert _night_rates(out, 2) == before


def test_a_repository_whose_last_session_was_deleted_still_has_its_history_read(
    tmp_path: Path,
) -> None:
    """Status stepped back (committed), then the repository's only session folder deleted:
    the walk lists repositories by their session folders, so the repository was never read
    again and the step back was found nowhere. The repositories OUT saw are read still."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    other = copy_tree(repo, tmp_path / "root" / "other")
    git(repo, "init", "-q")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    out = tmp_path / "out"
    _night(other, out, 1)
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-02T10:00:00Z", "back to open")
    shutil.rmtree(repo / SESSION)
    commit(repo, "2026-07-02T11:00:00Z", "delete the session")
    _night(other, out, 2)
    _night(other, out, 3)
    assert [(p, r) for p, r, _ in _series(out)] == [("night-2", "BS-STATE-01")]
    failing = connect(Out(out)).execute(
        "SELECT point, repo_path FROM statuses WHERE rule_id = 'BS-STATE-01' AND status = 'fail'"
    )
    assert failing.fetchall() == [("night-2", "repo")]


def test_a_repository_around_a_listed_one_whose_last_session_was_deleted_has_its_history_read(
    tmp_path: Path,
) -> None:
    """The other way round (found by a hunt): the outer repository's last session folder
    deleted while a clone nested in it (vendor/inner) still holds one. Walking the outer one
    would read the inner's sessions twice, so it was left out and its step back was found
    nowhere. Its history is read alone, without a walk."""
    outer = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "outer")
    (outer / ".gitignore").write_text("vendor/\n")
    git(outer, "init", "-q")
    edit(outer, "state.md", "Status: open", "Status: stopping")
    commit(outer, "2026-07-01T10:00:00Z", "stopping")
    inner = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", outer / "vendor" / "inner")
    git(inner, "init", "-q")
    commit(inner, "2026-07-01T09:00:00Z", "inner")
    out = tmp_path / "out"
    _night(outer, out, 1)
    edit(outer, "state.md", "Status: stopping", "Status: open")
    commit(outer, "2026-07-02T10:00:00Z", "back to open")
    shutil.rmtree(outer / SESSION)
    commit(outer, "2026-07-02T11:00:00Z", "delete the session")
    _night(outer, out, 2)
    assert [(p, r) for p, r, _ in _series(out)] == [("night-2", "BS-STATE-01")]
    statuses = connect(Out(out)).execute(
        "SELECT repo_path, status FROM statuses WHERE rule_id = 'BS-STATE-01' "
        "AND point = 'night-2' ORDER BY 1"
    )
    assert statuses.fetchall() == [("outer", "fail"), ("outer/vendor/inner", "pass")]


@pytest.mark.parametrize("around", [False, True])
def test_a_repository_whose_sessions_were_all_deleted_is_read_on_a_first_crawl(
    tmp_path: Path, around: bool
) -> None:
    """§2 reads a snapshot per commit that touched a session folder: a repository whose every
    session folder was deleted before OUT ever saw it (a new OUT, a repository newly under the
    root) was never read, and the step back in its history was found nowhere (found by a hunt;
    OUT's own repositories were read since 2026-12-05). `around`: it holds a live clone."""
    root = tmp_path / "root"
    gone = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "gone")
    git(gone, "init", "-q")
    edit(gone, "state.md", "Status: open", "Status: stopping")
    commit(gone, "2026-07-01T10:00:00Z", "stopping")
    edit(gone, "state.md", "Status: stopping", "Status: open")
    commit(gone, "2026-07-02T10:00:00Z", "back to open")
    shutil.rmtree(gone / SESSION)
    commit(gone, "2026-07-02T11:00:00Z", "delete the session")
    live = root / "gone" / "vendor" / "live" if around else root / "live"
    copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", live)
    if around:
        (gone / ".gitignore").write_text("vendor/\n")
    plain = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", root / "never")
    git(plain, "init", "-q")
    shutil.rmtree(plain / "docs")
    commit(plain, "2026-07-01T09:00:00Z", "no session ever")
    out = tmp_path / "out"
    _night(gone, out, 1)
    # Git's answers, kept per HEAD: the next night asks again only where HEAD moved.
    asked = read_state(Out(out), "past-sessions.json")
    assert {key.rpartition("\x1f")[2]: v["held"] for key, v in asked.items()} == {
        "gone": True,
        "never": False,
    }
    _night(gone, out, 2)  # from now on OUT knows `gone` as a repository it saw sessions in
    assert [(p, r) for p, r, _ in _series(out)] == [("night-1", "BS-STATE-01")]
    failing = connect(Out(out)).execute(
        "SELECT point, repo_path FROM statuses WHERE rule_id = 'BS-STATE-01' AND status = 'fail'"
    )
    assert failing.fetchall() == [("night-1", "gone")]


@pytest.mark.parametrize("outer_git", [True, False])
def test_a_nested_repository_whose_last_session_was_deleted_still_has_its_history_read(
    tmp_path: Path, outer_git: bool
) -> None:
    """As above, but the emptied repository is a clone nested inside a repository that still
    holds a session (vendor/inner, a submodule's place; found by a hunt): it lies inside a
    listed repository, so the guard against walking one repository inside another left it
    out, and the step back committed before the deletion was found nowhere."""
    outer = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "outer")
    if outer_git:
        (outer / ".gitignore").write_text("vendor/\n")
        git(outer, "init", "-q")
        commit(outer, "2026-07-01T09:00:00Z", "outer")
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", outer / "vendor" / "inner")
    git(repo, "init", "-q")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-01T10:00:00Z", "stopping")
    out = tmp_path / "out"
    _night(outer, out, 1)
    edit(repo, "state.md", "Status: stopping", "Status: open")
    commit(repo, "2026-07-02T10:00:00Z", "back to open")
    shutil.rmtree(repo / SESSION)
    commit(repo, "2026-07-02T11:00:00Z", "delete the session")
    _night(outer, out, 2)
    assert [(p, r) for p, r, _ in _series(out)] == [("night-2", "BS-STATE-01")]
    failing = connect(Out(out)).execute(
        "SELECT point, repo_path FROM statuses WHERE rule_id = 'BS-STATE-01' AND status = 'fail'"
    )
    assert failing.fetchall() == [("night-2", "outer/vendor/inner")]


@pytest.mark.parametrize("moved_as", ["NFC", "NFD"])
def test_a_move_to_history_is_one_session_whatever_the_unicode_form_of_its_name(
    tmp_path: Path, moved_as: str
) -> None:
    """A research session `café-brainstorm` (composed) moved to docs/history/brainstorms/ as
    `café` written decomposed (macOS): the topic's two spellings gave two session keys, so the
    move was no step of one session and D1, removed in it, passed BS-LEDGER-01 where the same
    move spelled alike fails it (found by a hunt)."""
    import unicodedata

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    research = repo / "docs" / "research" / unicodedata.normalize("NFC", "caf\u00e9-brainstorm")
    (repo / SESSION).rename(research)
    git(repo, "init", "-q")
    commit(repo, "2026-07-08T15:00:00Z", "open the session")
    _night(repo, tmp_path / "out", 1)
    history = (
        repo / "docs" / "history" / "brainstorms" / unicodedata.normalize(moved_as, "caf\u00e9")
    )
    history.parent.mkdir(parents=True)
    research.rename(history)
    ledger = history / "ledger.md"
    ledger.write_text(ledger.read_text().split("## D2")[0])
    commit(repo, "2026-07-09T15:00:00Z", "harvest, dropping D2")
    _night(repo, tmp_path / "out", 2)
    keys = connect(Out(tmp_path / "out")).execute(
        "SELECT count(DISTINCT session_key) FROM point_sessions"
    )
    assert keys.fetchall() == [(1,)]
    found = [m for p, r, m in _series(tmp_path / "out") if r == "BS-LEDGER-01"]
    assert any(m.startswith("D2 was removed") for m in found), found


def test_two_folders_spelling_one_topic_in_two_unicode_forms_fail_the_layout(
    tmp_path: Path,
) -> None:
    """Two research folders `café-brainstorm`, one composed, one decomposed, on a disk that
    keeps both: one session key, so one stands for the session and the other's open fork with
    no `Closes when:` would go unseen; on macOS the two are one folder. Both say so, and the
    standing one fails CENSUS-LOC-01, in detect as in the crawl (found by a hunt)."""
    import unicodedata

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    research = repo / "docs" / "research"
    for form in ("NFC", "NFD"):
        copy_tree(repo / SESSION, research / unicodedata.normalize(form, "caf\u00e9-brainstorm"))
    hidden = research / unicodedata.normalize("NFC", "caf\u00e9-brainstorm")
    (hidden / "forks.md").write_text((hidden / "forks.md").read_text() + "\n## F9 — Ok? [open]\n")
    out = tmp_path / "out"
    crawl([str(tmp_path / "root")], str(out), workers=1)
    check(str(out))
    failed = connect(Out(out)).execute(
        "SELECT rule_id FROM statuses WHERE own AND status = 'fail' AND topic <> 'demo'"
    )
    assert "CENSUS-LOC-01" in {rule for (rule,) in failed.fetchall()}
    for folder in research.glob("caf*"):
        result = runner.invoke(app, ["detect", str(folder)])
        assert result.exit_code == 1, result.output
        assert "CENSUS-LOC-01 fail" in result.stdout and "another Unicode form" in result.stdout


def test_a_file_spelling_the_topic_in_another_unicode_form_is_no_twin(tmp_path: Path) -> None:
    """A file `café-brainstorm` beside the folder `café-brainstorm` (decomposed) is no
    session: the crawl says it is a file where a folder would be and passes the folder's
    CENSUS-LOC-01. Detect took any name for a twin folder and failed the rule, telling the
    user to merge two sessions (found by a hunt)."""
    import unicodedata

    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    research = repo / "docs" / "research"
    folder = research / unicodedata.normalize("NFD", "caf\u00e9-brainstorm")
    (research / "demo-brainstorm").rename(folder)
    (research / unicodedata.normalize("NFC", "caf\u00e9-brainstorm")).write_text("x\n")
    out = tmp_path / "out"
    crawl([str(tmp_path / "root")], str(out), workers=1)
    check(str(out))
    checked = connect(Out(out)).execute(
        "SELECT status FROM statuses WHERE rule_id = 'CENSUS-LOC-01'"
    )
    assert checked.fetchall() == [("pass",)]
    result = runner.invoke(app, ["detect", str(folder)])
    assert result.exit_code == 0, result.output
    assert "CENSUS-LOC-01 pass" in result.stdout and "Unicode form" not in result.stdout


def _nightly_findings(root: Path, out: Path, night: str) -> None:
    crawl([str(root)], str(out), workers=1, git_history=True, point=night)
    check(str(out))


@pytest.mark.parametrize("move", ["fast-forward", "cherry-pick", "older commit"])
def test_a_working_tree_moved_along_committed_history_counts_no_step_again(
    tmp_path: Path, move: str
) -> None:
    """Nights whose working trees hold nothing uncommitted are compared through their
    commits, each counted on the night first seen: compared tree to tree, HEAD reaching a
    counted step back again (a fast-forward, a cherry-pick) counted it again, and a night
    on an older commit (a detached checkout) made false findings (found by a hunt)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    git(repo, "init", "-q")
    first = commit(repo, "2026-07-08T15:00:00Z", "open the session")
    edit(repo, "state.md", "Status: open", "Status: stopping")
    commit(repo, "2026-07-09T15:00:00Z", "start stopping")
    out = tmp_path / "out"
    if move == "older commit":
        _nightly_findings(tmp_path / "root", out, "n1")
        git(repo, "checkout", "-q", "--detach", first)
        _nightly_findings(tmp_path / "root", out, "n2")
        git(repo, "checkout", "-q", "main")
        _nightly_findings(tmp_path / "root", out, "n3")
        expected = []
    else:
        git(repo, "checkout", "-q", "-b", "feat")
        edit(repo, "state.md", "Status: stopping", "Status: open")
        step = commit(repo, "2026-07-10T15:00:00Z", "step back on a branch")
        _nightly_findings(tmp_path / "root", out, "n1")
        git(repo, "checkout", "-q", "main")
        _nightly_findings(tmp_path / "root", out, "n2")
        if move == "fast-forward":
            git(repo, "merge", "-q", "--ff-only", "feat")
        else:
            dates = {"GIT_COMMITTER_DATE": "2026-07-11T15:00:00Z"}
            git(repo, "cherry-pick", step, env=dates)
        _nightly_findings(tmp_path / "root", out, "n3")
        expected = [("n1", "BS-STATE-01")]
    con = connect(Out(out))
    found = con.execute(
        "SELECT point, rule_id FROM point_series_findings ORDER BY point, rule_id"
    ).fetchall()
    con.close()
    assert found == expected


D3 = (
    "\n## D3 — Digests off means email off after all\n- Decision: turning digests off stops "
    "email.\n- Why: support asked.\n- How to apply: one toggle.\n- Reverses: D2\n"
)


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        # A no-break or zero-width space: RE2's \s is ASCII's alone (found by a hunt).
        ("forks.md", "decides the send window", "decides the send\u00a0window"),
        ("ledger.md", "receives each notification", "receives\u00a0each noti\u200bfication"),
        # Markup the page shows as the same words.
        ("forks.md", "Do security alerts", "Do <em>security</em> alerts"),
        ("forks.md", "ride in a digest?", "ride in a [digest](#digests)\\?"),
        ("ledger.md", "each notification", "each&#32;<b>notification</b>"),
        # A reversal note with the dash, date or split emphasis around it.
        ("ledger.md", "never nothing.", "never nothing. — Reversed by D3."),
        ("ledger.md", "never nothing.", "never nothing. (Reversed by D3 on 2026-07-10.)"),
        ("ledger.md", "never nothing.", "never nothing. **Reversed** by D3."),
        ("ledger.md", "never nothing.", "never nothing. Reversed by [D3](#d3)."),
        # Every form the ledger's reader takes as the phrase (found by a hunt: the rest of
        # the note was left behind, a rewrite).
        ("ledger.md", "never nothing.", "never nothing. Reversed by D3 and D4."),
        ("ledger.md", "never nothing.", "never nothing. Reversed by D3, D4."),
        ("ledger.md", "never nothing.", "never nothing. Reversed by (D3)."),
        ("ledger.md", "never nothing.", "never nothing. Reversed-by #D3."),
        ("ledger.md", "never nothing.", "never nothing. **Reversed by:** D3"),
        ("ledger.md", "never nothing.", "never nothing. (Reversed by D3, 2026-07-10)"),
        ("ledger.md", "never nothing.", "never nothing. Reversed by D3 (2026-07-10)."),
    ],
)
def test_a_text_shown_the_same_is_no_retitle_or_rewrite(
    tmp_path: Path, file: str, old: str, new: str
) -> None:
    """A fork's title or a ledger text that the page shows with the same words, or with a
    reversal note added, is no finding along history, nor any content failure (found by a
    hunt: each was `retitled` or `rewritten` at the night it was made)."""
    repo = copy_tree(FIXTURES / "cases" / "base" / "open" / "repo", tmp_path / "root" / "repo")
    out = tmp_path / "out"
    _night(repo, out, 1)
    edit(repo, file, old, new)
    if "D3" in new:  # the entry that reverses D2, after it (and a second, when named)
        ledger = repo / SESSION / "ledger.md"
        second = D3.replace("D3", "D4") if "D4" in new else ""
        ledger.write_text(ledger.read_text() + D3 + second)
    _night(repo, out, 2)
    assert _series(out) == []
    failed = connect(Out(out)).execute(
        "SELECT rule_id FROM rule_rates WHERE point = 'night-2' AND failed > 0 "
        "AND rule_id IN ('BS-FORK-01', 'BS-LEDGER-01')"
    )
    assert failed.fetchall() == []
