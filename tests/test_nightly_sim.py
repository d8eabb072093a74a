"""The nightly simulator alone: real git repositories, night by night, and a truth that holds.

The truth's series part comes from the simulator's own record of which commit changed which
session; these tests check that record against git itself, the working trees against the
model, and the content part against the generator's single-corpus oracle.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fixtures.generate import (
    GATE_RULES,
    GATES,
    STAGES,
    Lex,
    Writer,
    build_session,
    history_folder,
    main,
    research_folder,
    truth_record,
    write_session,
)
from fixtures.nightly import (
    SERIES_RULES,
    VIOLATIONS,
    NightlySimulator,
    NightTruth,
    day_of,
    session_texts,
)

NIGHTS = 7


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "core.quotePath=false", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def normal(data: bytes) -> bytes:
    """Bytes as the census reads them: BOM dropped, CRLF read as LF."""
    return data.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n")


@dataclass
class Week:
    sim: NightlySimulator
    truths: list[NightTruth]
    # Per night: what the generator's own oracle says about the model, per (repo, path).
    oracle: list[dict[tuple[str, str], dict[str, Any]]] = field(default_factory=list)
    # Per night: files where the working tree and the model disagree.
    disk: list[list[str]] = field(default_factory=list)
    # Per night: sessions where `git status` and the model disagree about uncommitted edits.
    dirty: list[list[str]] = field(default_factory=list)
    uncommitted: list[int] = field(default_factory=list)


def observe(week: Week) -> None:
    """Record tonight's cross-checks, before the models move on."""
    sim = week.sim
    week.oracle.append(
        {(repo, s.path): truth_record(repo, s, facts)["gates"] for repo, s, facts in sim.models()}
    )
    expected: dict[Path, dict[str, bytes]] = defaultdict(dict)
    for repo_path, path, data in sim.session_files():
        expected[repo_path][path] = data
    wrong = []
    for repo in sim.repos:
        on_disk = {
            str(p.relative_to(repo.path)): p.read_bytes()
            for p in repo.path.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(repo.path).parts
        }
        model = expected[repo.path]
        wrong += [f"{repo.name}/{p}" for p in sorted(on_disk.keys() ^ model.keys())]
        wrong += [f"{repo.name}/{p}" for p in sorted(model) if on_disk.get(p) != model[p]]
    week.disk.append(wrong)
    mismatched, uncommitted = [], 0
    for repo in sim.repos:
        status = git(repo.path, "status", "--porcelain", "--untracked-files=all")
        # ops/ is never committed; with a BS-OPS-01 defect git merely lists it as untracked.
        changed = {line[3:].split(" -> ")[-1] for line in status.splitlines()}
        changed = {p for p in changed if "/ops/" not in p}
        for t in repo.tracked:
            folder = t.session.path + "/"
            says = any(p.startswith(folder) for p in changed)
            if says != (t.files != t.head):
                mismatched.append(f"{repo.name}/{t.session.path}")
            uncommitted += says
    week.dirty.append(mismatched)
    week.uncommitted.append(uncommitted)


def simulate(root: Path, sessions: int, seed: int, nights: int, **kw: Any) -> Week:
    sim = NightlySimulator(root, sessions, seed, **kw)
    week = Week(sim, [sim.truth[0]])
    observe(week)
    for _ in range(nights - 1):
        week.truths.append(sim.advance())
        observe(week)
    return week


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> Week:
    return simulate(tmp_path_factory.mktemp("nightly") / "corpus", 60, 0, NIGHTS, repos=6)


def records_by_session(truth: NightTruth) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["repo"], r["path"]): r for r in truth.records}


def session_of(truth: NightTruth, repo: str, topic: str) -> dict[str, Any] | None:
    found = [r for r in truth.records if r["repo"] == repo and r["topic"] == topic]
    return found[0] if found else None


def test_same_seed_same_repositories_and_truth(tmp_path: Path) -> None:
    a = simulate(tmp_path / "a", 24, 5, 4, repos=3, jobs=1)
    b = simulate(tmp_path / "b", 24, 5, 4, repos=3, jobs=3)
    c = simulate(tmp_path / "c", 24, 6, 4, repos=3, jobs=1)
    assert [t.records for t in a.truths] == [t.records for t in b.truths]
    assert [t.summary for t in a.truths] == [t.summary for t in b.truths]
    heads = [[git(r.path, "rev-parse", "HEAD") for r in w.sim.repos] for w in (a, b, c)]
    assert heads[0] == heads[1], "same seed: same commits, to the commit ID"
    assert heads[0] != heads[2]


@pytest.mark.slow
def test_every_night_is_real_git_with_ops_never_committed(week: Week) -> None:
    for repo in week.sim.repos:
        assert git(repo.path, "rev-parse", "--is-inside-work-tree").strip() == "true"
        git(repo.path, "fsck", "--no-progress")
        every = git(repo.path, "log", "--all", "--format=", "--name-only")
        assert "/ops/" not in every, "ops/ is ignored by its own .gitignore"
        for folder in repo.path.glob("docs/research/*-brainstorm"):
            lines = (folder / "ops" / ".gitignore").read_text().splitlines()
            assert "*" in [line.strip() for line in lines]
    assert week.sim.nights == NIGHTS
    assert [t.night for t in week.truths] == list(range(1, NIGHTS + 1))
    assert max(week.uncommitted[1:]) > 0, "some nights leave edits uncommitted"


@pytest.mark.slow
def test_working_trees_are_the_model(week: Week) -> None:
    assert week.disk == [[] for _ in range(NIGHTS)]
    assert week.dirty == [[] for _ in range(NIGHTS)]


def assert_content_is_the_oracle(week: Week) -> None:
    """Each night's gates are the generator's oracle on the model, plus the series failures."""
    for truth, oracle in zip(week.truths, week.oracle, strict=True):
        records = records_by_session(truth)
        assert records.keys() == oracle.keys(), "the population is every working-tree session"
        for where, gates in oracle.items():
            record = records[where]
            series = {f["rule"] for f in record["series"]}
            assert series <= set(SERIES_RULES)
            for gate in GATES:
                expected = {s: list(gates[gate][s]) for s in ("fail", "info", "skipped")}
                for rule in series & set(GATE_RULES[gate]):
                    for status in ("info", "skipped"):
                        if rule in expected[status]:
                            expected[status].remove(rule)
                    expected["fail"] = sorted({*expected["fail"], rule})
                assert record["gates"][gate] == expected, (truth.night, where, gate)


@pytest.mark.slow
def test_content_verdicts_are_the_generators_oracle(week: Week) -> None:
    assert_content_is_the_oracle(week)


@pytest.mark.slow
def test_with_content_defects_the_week_still_holds_together(tmp_path: Path) -> None:
    """Defective sessions (a missing file, a duplicate ID…) sit in the same evolving repos."""
    week = simulate(tmp_path / "corpus", 50, 4, NIGHTS, repos=5, defect_rate=0.2)
    assert week.disk == [[] for _ in range(NIGHTS)]
    assert week.dirty == [[] for _ in range(NIGHTS)]
    assert_content_is_the_oracle(week)
    failed = sum(c["failed"] for c in week.truths[-1].summary["rules"].values())
    assert failed > sum(week.truths[-1].summary["series_failures"].values())


@pytest.mark.slow
def test_content_stays_clean_by_default(week: Week) -> None:
    """Defects are off: every failure at a session's own gate is a series failure."""
    for truth in week.truths:
        for rule, counts in truth.summary["rules"].items():
            assert counts["failed"] == truth.summary["series_failures"].get(rule, 0), (
                truth.night,
                rule,
            )


@pytest.mark.slow
def test_every_kind_of_event_happens_within_a_week(week: Week) -> None:
    kinds = {e["kind"] for t in week.truths for e in t.events}
    assert kinds >= {*VIOLATIONS, "merged-branch"}
    activity = sum(t.summary["activity"].get("harvested", 0) for t in week.truths)
    assert activity > 0
    stages = {s for t in week.truths for s in t.summary["stages"]}
    assert stages == set(STAGES)
    grown = [t.summary["sessions"] for t in week.truths]
    assert grown[-1] > grown[0], "new sessions start"


@pytest.mark.slow
def test_series_failures_fall_on_the_night_of_the_event(week: Week) -> None:
    due: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for truth in week.truths:
        for e in truth.events:
            if e["rule"] is not None:
                due[(e["repo"], e["topic"], e["rule"])].add(truth.night)
    seen: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for truth in week.truths:
        for r in truth.records:
            for f in r["series"]:
                seen[(r["repo"], r["topic"], f["rule"])].add(truth.night)
    assert seen == due


@pytest.mark.slow
def test_a_point_after_skipped_nights_sees_their_commits_not_their_working_trees(
    week: Week,
) -> None:
    sim = week.sim
    first = {(r["repo"], r["topic"]): r for r in sim.point_truth(NIGHTS, since=None).records}
    assert sim.point_truth(NIGHTS, NIGHTS - 1).records == week.truths[-1].records
    for truth in week.truths:
        for e in truth.events:
            if e["kind"] in VIOLATIONS and e["kind"] != "worktree-backward":
                record = first[(e["repo"], e["topic"])]
                assert e["rule"] in {f["rule"] for f in record["series"]}, e
            if e["kind"] == "worktree-backward" and 1 < truth.night < NIGHTS:
                night = truth.night
                seen = sim.point_truth(night, since=None).records
                unseen = sim.point_truth(night + 1, since=night - 1).records
                for records, fails in ((seen, True), (unseen, False)):
                    found = [
                        r for r in records if r["repo"] == e["repo"] and r["topic"] == e["topic"]
                    ]
                    rules = {f["rule"] for f in found[0]["series"]}
                    assert ("BS-STATE-01" in rules) == fails, (e, fails)


@pytest.mark.slow
def test_a_committed_violation_names_its_commit(week: Week) -> None:
    for truth in week.truths:
        for e in truth.events:
            record = session_of(truth, e["repo"], e["topic"])
            assert record is not None
            commits = {f["commit"] for f in record["series"]}
            if e["kind"] == "worktree-backward":
                assert e["commit"] is None and commits == {None}
            elif e["kind"] in VIOLATIONS:
                assert e["commit"] in commits
                assert e["rule"] in record["gates"]["session"]["fail"]


@pytest.mark.slow
def test_merged_old_branches_find_nothing_and_are_older_than_last_night(week: Week) -> None:
    merges = [(t.night, e) for t in week.truths for e in t.events if e["kind"] == "merged-branch"]
    assert merges
    repos = {r.name: r for r in week.sim.repos}
    for night, e in merges:
        repo = repos[e["repo"]].path
        record = session_of(week.truths[night - 1], e["repo"], e["topic"])
        assert record is not None and record["series"] == []
        previous_night = day_of(night - 1)
        resolved = datetime.fromisoformat(e["resolved_at"])
        for sha in e["branch_commits"]:
            author, committer = git(repo, "log", "-1", "--format=%at %ct", sha).split()
            for stamp in (author, committer):
                when = datetime.fromtimestamp(int(stamp), UTC)
                assert resolved < when < previous_night
            git(repo, "merge-base", "--is-ancestor", sha, "HEAD")
            forks = git(repo, "show", f"{sha}:{record['path']}/forks.md")
            assert re.search(rf"^## {e['fork']}\b", forks, re.M), "the fork is listed on the branch"
        parents = git(repo, "log", "-1", "--format=%P", e["commit"]).split()
        assert len(parents) == 2
        merged_at = datetime.fromtimestamp(
            int(git(repo, "log", "-1", "--format=%ct", e["commit"])), UTC
        )
        assert day_of(night) <= merged_at < day_of(night) + timedelta(days=1)
        # Read by date, the fork reappears after the commit that resolved it.
        ledger = git(repo, "show", f"{e['resolved_by']}:{research_folder(e['topic'])}/ledger.md")
        assert re.search(rf"^- Resolves:.*\b{e['fork']}\b", ledger, re.M)


@pytest.mark.slow
def test_commits_are_dated_within_their_night(week: Week) -> None:
    branch = {sha for t in week.truths for e in t.events for sha in e.get("branch_commits", [])}
    for repo in week.sim.repos:
        log = git(repo.path, "log", "--format=%H %at %ct", "HEAD")
        for line in log.splitlines():
            sha, author, committer = line.split()
            if sha in branch:
                continue
            night = repo.series.commits[sha].night
            for stamp in (author, committer):
                offset = datetime.fromtimestamp(int(stamp), UTC) - day_of(night)
                assert timedelta(hours=9) <= offset <= timedelta(hours=18), (sha, night)


@pytest.mark.slow
def test_the_record_of_which_commit_changed_which_session_is_gits(week: Week) -> None:
    """The oracle's nodes come from its own bookkeeping: git must agree, commit by commit."""
    for repo in week.sim.repos:
        topics = {t.key: t.session.topic for t in repo.tracked}
        lines = git(repo.path, "rev-list", "--parents", "HEAD").splitlines()
        assert {line.split()[0] for line in lines} == set(repo.series.commits)
        for line in lines:
            sha, *parents = line.split()
            touched: set[str] = set()
            for parent in parents or [None]:
                args = [parent, sha] if parent else ["--root", sha]
                names = git(repo.path, "diff-tree", "-r", "--name-only", "--no-commit-id", *args)
                touched.update(names.split("\n"))
            changed = {
                key
                for key, topic in topics.items()
                if any(
                    p.startswith((research_folder(topic) + "/", history_folder(topic) + "/"))
                    for p in touched
                )
            }
            node = repo.series.commits[sha]
            recorded = {key for key, found in node.frontier["either"].items() if found == {sha}}
            assert changed == recorded, (repo.name, sha)


@pytest.mark.slow
def test_a_harvest_is_a_git_mv_with_ops_deleted(week: Week) -> None:
    moved = 0
    for repo in week.sim.repos:
        log = git(repo.path, "log", "-M", "--format=%H", "--name-status", "--diff-filter=R", "HEAD")
        moved += sum(
            1 for line in log.splitlines() if line.startswith("R") and "docs/history/" in line
        )
        for folder in repo.path.glob("docs/history/brainstorms/*"):
            assert not (folder / "ops").exists()
    assert moved > 0


def test_session_texts_match_write_session(tmp_path: Path) -> None:
    """The simulator renders sessions itself: it must write what write_session writes."""
    rng = random.Random(3)
    lex = Lex(rng)
    writer = Writer(str(tmp_path), lex)
    for i, stage in enumerate(STAGES * 3):
        session = build_session(rng, lex, f"topic-{i}", stage)
        write_session(writer, session)
        committed, ops = session_texts(session)
        expected = {name: text for name, (text, _) in {**committed, **ops}.items()}
        folder = tmp_path / session.path
        written = {
            str(p.relative_to(folder)): normal(p.read_bytes()).decode()
            for p in folder.rglob("*")
            if p.is_file()
        }
        assert written == expected


def test_the_command_line_runs_a_command_after_each_night(tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    log = tmp_path / "nights.log"
    args = [str(out), "--sessions", "8", "--seed", "2", "--git", "--nights", "3"]
    assert main([*args, "--jobs", "1", "--each-night", f"echo {{night}} {{root}} >> {log}"]) == 0
    assert log.read_text().split("\n")[:3] == [f"{k} {out}" for k in (1, 2, 3)]
    lines = [json.loads(x) for x in (out / "truth-nights.jsonl").read_text().splitlines()]
    assert {r["night"] for r in lines} == {1, 2, 3}
    summary = json.loads((out / "truth-nights-summary.json").read_text())
    assert [n["night"] for n in summary["nights"]] == [1, 2, 3]
    for night in summary["nights"]:
        counts = night["rules"]["BS-STATE-01"]
        assert counts["evaluated"] + counts["skipped"] == night["sessions"]
    assert main([*args, "--jobs", "1"]) == 2, "OUT is not empty"
    assert main([str(tmp_path / "x"), "--sessions", "8", "--nights", "2"]) == 2, "needs --git"
    failing = [str(tmp_path / "y"), "--sessions", "4", "--git", "--nights", "2"]
    assert main([*failing, "--each-night", "exit 3"]) == 2, "a failing command stops the run"
