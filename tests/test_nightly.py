"""The census over a simulated week: every night gets one right answer, and it never changes.

Each night the nightly simulator moves its repositories on, the census crawls them with
`--git-history` as that night's census point and checks them, and the census's statuses
and rates must equal the simulator's truth for that night. One night is crawled as two
concurrent shards, one with the root spelled relative; after the last night every earlier
night's rates are read again and must be byte-identical to what that night said.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from fixtures.generate import GATE_RULES, OWN_GATE
from fixtures.nightly import SERIES_RULES, NightlySimulator, NightTruth
from pipeline.check import check
from pipeline.crawl import crawl
from pipeline.engine import connect
from pipeline.stats import Lifetimes, compute
from pipeline.store import Out
from tests.conftest import FIXTURES, copy_tree, make_git_repo, show_lifetimes_unfrozen

SESSIONS = 60
REPOS = 6
NIGHTS = 7
SHARDED_NIGHT = 3
RELATIVE_NIGHT = 5
# The tables whose rows hold content (no run of their own): equal whoever wrote them.
CONTENT_TABLES = (
    "snapshots",
    "aspects",
    "aspect_refs",
    "forks",
    "ledger",
    "ledger_resolves",
    "turns",
    "sync_events",
    "manifests",
    "manifest_rows",
    "fragments",
    "links",
    "parse_issues",
    "rule_results",
)
# Columns that name the run or shard that wrote a row, not what the row says.
RUN_COLUMNS = {"run_id", "check_id", "shard"}

Key = tuple[str, str]  # (repo_path, path): how a census session meets a truth record


def point(night: int) -> str:
    return f"night-{night}"


def crawl_shard(root: str, out: str, name: str, k: int, n: int) -> None:
    """One shard's crawl, in a process of its own (a module-level function, for spawn)."""
    crawl([root], out, workers=1, git_history=True, shard=(k, n), point=name)


def crawl_sharded(root: Path, out: Path, name: str, shards: int = 2) -> None:
    """All shards of one census point at once, each in its own process, into one OUT."""
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=crawl_shard, args=(str(root), str(out), name, k, shards))
        for k in range(1, shards + 1)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=900)
    assert [p.exitcode for p in procs] == [0] * shards, "a shard's crawl failed"


def census(root: Path, out: Path, night: int) -> None:
    """Night `night`'s census point: plain, sharded or with the root spelled relative."""
    if night == SHARDED_NIGHT:
        crawl_sharded(root, out, point(night))
    elif night == RELATIVE_NIGHT:
        with contextlib.chdir(root.parent):
            relative = os.path.relpath(root)
            assert not os.path.isabs(relative)
            crawl([relative], str(out), git_history=True, point=point(night))
    else:
        crawl([str(root)], str(out), git_history=True, point=point(night))
    check(str(out))


def expected_statuses(truth: NightTruth) -> dict[Key, tuple[str, dict[str, str]]]:
    """Per session: its stage and every rule's status at its own gate (pass unless listed)."""
    found = {}
    for r in truth.records:
        gate = OWN_GATE[r["stage"]]
        lists = r["gates"][gate]
        listed = {rule: status for status in ("fail", "info", "skipped") for rule in lists[status]}
        statuses = {rule: listed.get(rule, "pass") for rule in GATE_RULES[gate]}
        found[(r["repo"], r["path"])] = (r["stage"], statuses)
    return found


def census_statuses(con: Any, name: str) -> dict[Key, tuple[str, dict[str, str]]]:
    rows = con.execute(
        "SELECT repo_path, path, stage, rule_id, status FROM statuses WHERE point = ? AND own",
        [name],
    ).fetchall()
    found: dict[Key, tuple[str, dict[str, str]]] = {}
    for repo_path, path, stage, rule, status in rows:
        found.setdefault((repo_path, path), (stage, {}))[1][rule] = status
    return found


def rate_rows(con: Any, name: str) -> list[str]:
    """A point's rule_rates rows, sorted, as text: what must never change afterwards (its
    figures: run_id names the crawl, which a sharded and a plain night do not share)."""
    rows = con.execute(
        "SELECT * EXCLUDE (run_id) FROM rule_rates WHERE point = ?", [name]
    ).fetchall()
    return sorted(repr(row) for row in rows)


def lifetimes_of(out: Path, name: str, live: bool = False) -> tuple[Lifetimes, Lifetimes]:
    """A point's fork lifetimes (hours, syncs) as `census stats` gives them (no label split);
    `live`: counted again from the history, not read from what check froze."""
    con = connect(Out(out))  # compute keeps its rates in the connection: one each
    if live:
        show_lifetimes_unfrozen(con)
    stats = compute(str(out), name, label_keys=set(), con=con)
    con.close()
    return stats.fork_lifetimes, stats.fork_syncs


def assert_rates(con: Any, truth: NightTruth) -> None:
    rows = con.execute(
        "SELECT rule_id, evaluated, failed, info, skipped, rate FROM rule_rates WHERE point = ?",
        [point(truth.night)],
    ).fetchall()
    found = {r[0]: r[1:] for r in rows}
    assert len(found) == len(rows), "one row per point and rule"
    for rule, want in truth.summary["rules"].items():
        counts = (want["evaluated"], want["failed"], want["info"], want["skipped"])
        if rule not in found:
            assert counts == (0, 0, 0, 0), (truth.night, rule)
            continue
        got = found[rule]
        assert got[:4] == counts, (truth.night, rule, got, want)
        rate = want["failed"] / want["evaluated"] if want["evaluated"] else None
        assert got[4] == pytest.approx(rate), (truth.night, rule)


def assert_findings(con: Any, truth: NightTruth) -> None:
    """The findings view lists exactly the failing rules at each session's own gate."""
    rows = con.execute(
        "SELECT DISTINCT repo_path, path, rule_id FROM findings "
        "WHERE point = ? AND status = 'fail'",
        [point(truth.night)],
    ).fetchall()
    want = {
        (r["repo"], r["path"], rule)
        for r in truth.records
        for rule in r["gates"][OWN_GATE[r["stage"]]]["fail"]
    }
    assert set(rows) == want, truth.night


@pytest.mark.slow
def test_a_simulated_week_every_night_right_and_never_changed(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    out = tmp_path / "out"
    sim = NightlySimulator(root, SESSIONS, seed=11, repos=REPOS)
    truths = [sim.truth[0]]
    kept: dict[int, list[str]] = {}
    lived: dict[int, tuple[Lifetimes, Lifetimes]] = {}
    for night in range(1, NIGHTS + 1):
        if night > 1:
            truths.append(sim.advance())
        truth = truths[-1]
        census(root, out, night)
        con = connect(Out(out))
        got = census_statuses(con, point(night))
        want = expected_statuses(truth)
        assert got.keys() == want.keys(), f"night {night}: the population differs"
        for key in sorted(want):
            assert got[key] == want[key], (night, key)
        assert_rates(con, truth)
        assert_findings(con, truth)
        assert_frozen(con, point(night))
        kept[night] = rate_rows(con, point(night))
        assert kept[night], f"night {night}: no rates"
        lived[night] = lifetimes_of(out, point(night))
        con.close()

    con = connect(Out(out))
    for night, rows in kept.items():
        assert rate_rows(con, point(night)) == rows, f"night {night}'s rates changed afterwards"
        assert lifetimes_of(out, point(night)) == lived[night], f"night {night}'s lifetimes"
        # What check froze is what that night's history gives, counted again after the week.
        assert lifetimes_of(out, point(night), live=True) == lived[night], f"night {night}"
    assert lived[NIGHTS][0].overall.closes > 0
    assert_series_events(con, truths)
    assert_pairs_of_a_range_are_the_views(con)
    # One series per session, whether the root was spelled relative or absolute.
    sessions = {(r["repo"], r["topic"]) for t in truths for r in t.records}
    keys = con.execute("SELECT count(DISTINCT session_key) FROM statuses").fetchone()[0]
    assert keys == len(sessions)
    con.close()


def assert_frozen(con: Any, name: str) -> None:
    """The night's counts and verdicts are what check froze, one verdict per session: rates
    read live instead (a check that froze none) would look the same, so it is asked here."""
    counts, verdicts, sessions, live = con.execute(
        "SELECT (SELECT count(*) FROM rule_counts_frozen WHERE point = $p), "
        "(SELECT count(*) FROM session_verdicts_frozen WHERE point = $p), "
        "(SELECT count(*) FROM point_sessions WHERE point = $p), "
        "(SELECT count(*) FROM points_counted_live) + (SELECT count(*) FROM points_judged_live)",
        {"p": name},
    ).fetchone()
    assert counts > 0 and verdicts == sessions > 0 and live == 0, (name, counts, verdicts, live)


def assert_series_events(con: Any, truths: list[NightTruth]) -> None:
    """A backward move, a retitle, a removed or rewritten entry: fail that night, no other."""
    keys: dict[tuple[str, Key], str] = {}
    failing: dict[tuple[str, str], set[int]] = defaultdict(set)
    for truth in truths:
        name = point(truth.night)
        rows = con.execute(
            "SELECT DISTINCT repo_path, path, session_key FROM statuses WHERE point = ?", [name]
        ).fetchall()
        keys.update({(name, (r[0], r[1])): r[2] for r in rows})
        rows = con.execute(
            "SELECT session_key, rule_id FROM statuses "
            "WHERE point = ? AND own AND status = 'fail' AND rule_id IN (?, ?, ?)",
            [name, *SERIES_RULES],
        ).fetchall()
        for session_key, rule in rows:
            failing[(session_key, rule)].add(truth.night)
    due: dict[tuple[str, str], set[int]] = defaultdict(set)
    kinds = set()
    for truth in truths:
        for e in truth.events:
            session_key = keys[(point(truth.night), (e["repo"], e["path"]))]
            if e["rule"] is None:
                for rule in SERIES_RULES:  # an old-dated merged branch finds nothing
                    assert truth.night not in failing[(session_key, rule)], e
                continue
            kinds.add(e["kind"])
            due[(session_key, e["rule"])].add(truth.night)
    assert {"status-backward", "fork-retitled", "ledger-removed"} <= kinds
    for where, nights in due.items():
        assert failing[where] == nights, where


def assert_pairs_of_a_range_are_the_views(con: Any) -> None:
    """check reads one point's pairs through history_pairs_in, which must give exactly the
    pairs the history_pairs view files under that point (and likewise for several points)."""
    columns = "session_key, root, point, before_id, before_seen, after_id, after_seen"
    last = con.execute("SELECT max(position) FROM points").fetchone()[0]
    ranges = [(p - 1, p) for p in range(1, last + 1)] + [(1, last - 1), (0, last)]
    for after, upto in ranges:
        ranged = con.execute(
            f"SELECT {columns} FROM history_pairs_in(?, ?) ORDER BY ALL", [after, upto]
        ).fetchall()
        whole = con.execute(
            f"SELECT {columns} FROM history_pairs JOIN points USING (point) "
            "WHERE position > ? AND position <= ? ORDER BY ALL",
            [after, upto],
        ).fetchall()
        assert ranged == whole, (after, upto)
    kinds = con.execute(
        "SELECT DISTINCT split_part(before_seen, ' ', 1) || '>' || split_part(after_seen, ' ', 1) "
        "FROM history_pairs_in(?, ?)",
        [last - 2, last],
    ).fetchall()
    # The last nights compare commits with commits and working trees with both.
    assert {k[0] for k in kinds} >= {"commit>commit", "run>run", "commit>run"}, kinds


def table_checksums(out: Path) -> dict[str, tuple[Any, ...]]:
    """Per table: row count and a hash sum per column, leaving out who wrote the rows."""
    con = connect(Out(out))
    sums = {}
    for table in (*CONTENT_TABLES, "observations"):
        columns = [r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()]
        drop = [c for c in columns if c in RUN_COLUMNS]
        if table == "observations":
            # A working tree is observed at its run's time; a commit at the commit's time.
            drop.append("observed_at")
            extra = ', sum(hash(observed_at)) FILTER (WHERE "commit" IS NOT NULL)'
        else:
            extra = ""
        kept = f"* EXCLUDE ({', '.join(drop)})" if drop else "*"
        query = f'SELECT count(*), sum(hash(COLUMNS({kept}))){extra} FROM "{table}"'
        sums[table] = tuple(con.execute(query).fetchone())
    con.close()
    return sums


def assert_checked_alike(sharded: Path, plain: Path, name: str) -> None:
    """Both OUTs checked hold the same rows (a checksum per table) and the same rates at the
    point `name`, and there are rates."""
    check(str(sharded))
    check(str(plain))
    assert table_checksums(sharded) == table_checksums(plain)
    rates = []
    for out in (sharded, plain):
        con = connect(Out(out))
        rates.append(rate_rows(con, name))
        con.close()
    assert rates[0] == rates[1] and rates[0]


@pytest.mark.slow
def test_concurrent_shards_hold_what_one_crawl_holds(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    sim = NightlySimulator(root, 40, seed=12, repos=4)
    for _ in range(4):
        sim.advance()
    sharded, plain = tmp_path / "sharded", tmp_path / "plain"
    name = point(sim.nights)
    crawl_sharded(root, sharded, name)
    crawl([str(root)], str(plain), git_history=True, point=name)
    assert_checked_alike(sharded, plain, name)
    assert lifetimes_of(sharded, name) == lifetimes_of(plain, name)
    assert lifetimes_of(plain, name)[0].overall.forks > 0
    con = connect(Out(plain))
    # OUT's first census point: it sees every night's commits at once.
    assert_rates(con, sim.point_truth(sim.nights, since=None))
    con.close()


# One example session, copied as a template into several repositories.
EXAMPLE_SESSION = (
    FIXTURES / "example" / "orbit-api" / "docs" / "research" / "rate-limits-brainstorm"
)


@pytest.mark.slow
def test_shards_meeting_one_content_store_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One session template in repositories of both shards: a shard that committed while the
    other ran stored the same snapshots again, and every row the rules join doubled (BS-STATE-01
    counted 16 sessions of 4; found by a hunt). A shard leaves out what the other committed."""
    import pipeline.crawl as crawling

    root = tmp_path / "corpus"
    for name in "abcd":
        copy_tree(EXAMPLE_SESSION, root / name / "docs" / "research" / "x-brainstorm")
        make_git_repo(root / name)
    sharded, plain = tmp_path / "sharded", tmp_path / "plain"
    commit = crawling._commit
    first: list[Any] = []

    def other_shard_commits_meanwhile(*args: Any, **kwargs: Any) -> None:
        monkeypatch.setattr(crawling, "_commit", commit)
        first.append(crawl([str(root)], str(sharded), git_history=True, shard=(1, 2), point="n1"))
        commit(*args, **kwargs)

    monkeypatch.setattr(crawling, "_commit", other_shard_commits_meanwhile)
    second = crawl([str(root)], str(sharded), git_history=True, shard=(2, 2), point="n1")
    assert first[0].sessions and second.sessions, "both shards hold one of the copies"
    crawl([str(root)], str(plain), git_history=True, point="n1")
    assert_checked_alike(sharded, plain, "n1")


def decided(out: Path) -> list[Any]:
    """Every point's findings along history (run ids, which differ between OUTs, left out)."""
    con = connect(Out(out))
    rows = con.execute(
        "SELECT point, session_key, rule_id, file, line, "
        "regexp_replace(message, 'run [0-9TZ.]+-[0-9a-f]+', 'run', 'g') "
        "FROM series_findings ORDER BY ALL"
    ).fetchall()
    con.close()
    return rows


@pytest.mark.slow
def test_a_week_checked_at_once_decides_what_nightly_checks_decide(tmp_path: Path) -> None:
    """check decides each pending point over that point's own pairs and history, so checking
    several nights in one go freezes what checking each night did."""
    root = tmp_path / "corpus"
    sim = NightlySimulator(root, 40, seed=13, repos=4)
    nightly, batched = tmp_path / "nightly", tmp_path / "batched"
    for night in range(1, 7):
        if night > 1:
            sim.advance()
        for out in (nightly, batched):
            crawl([str(root)], str(out), workers=1, git_history=True, point=point(night))
        check(str(nightly))
        if night in (2, 6):
            assert len(check(str(batched)).points) == (2 if night == 2 else 4)
    assert decided(nightly), "the week found nothing along history"
    assert decided(nightly) == decided(batched)
    assert nights_figures(nightly, 6) == nights_figures(batched, 6)


def nights_figures(out: Path, nights: int) -> list[tuple[list[str], tuple[Lifetimes, Lifetimes]]]:
    """Each night's rates and fork lifetimes, as stats reads them."""
    con = connect(Out(out))
    rates = [rate_rows(con, point(n)) for n in range(1, nights + 1)]
    con.close()
    return [(r, lifetimes_of(out, point(n))) for n, r in enumerate(rates, 1)]
